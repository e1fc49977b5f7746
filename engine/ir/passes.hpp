// Expansion of the compact form's passes into one member's explicit program, and the pattern pieces the
// expansions and the explicit planners share. The passes' data types are in engine/ir/compact.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/ir/compact.hpp"

namespace cclab {

// Appends member `member`'s ops of `pass` to `program` (member-relative peers and buffers; the lane maps
// them to global ones).
void expand_pass(const Pass& pass, int member, Program& program);
void expand_ring_pass(const RingPass& pass, int member, Program& program);
void expand_tree_pass(const TreePass& pass, int member, Program& program);
// only_channel >= 0: that channel's ops alone (the cost walk times an NVLSTree pass channel by channel).
void expand_nvls_tree_pass(const NvlsTreePass& pass, int member, Program& program, int only_channel = -1);

// only_channel >= 0: that channel's ops alone, as for NVLSTree.
void expand_sharp_pass(const SharpPass& pass, int member, Program& program, int only_channel = -1);

// only_channel >= 0: that channel's ops alone, as for NVLSTree.
void expand_nvls_pass(const NvlsPass& pass, int member, Program& program, int only_channel = -1);
// Ops of channel c of an NVLS pass, over all its members (exact).
std::uint64_t nvls_channel_ops(const NvlsPass& pass, int channel);
// Whether channels a and b of an NVLS pass do the same work: every member's part as long, in as many rounds.
bool nvls_channels_alike(const NvlsPass& pass, int a, int b);
// The ops the cost walk expands: one channel of each kind (at most two: the parts differ by one element).
std::uint64_t nvls_walked_ops(const NvlsPass& pass);

// Ops the pass expands to, over all its members (exact, in O(C·P) for ring, tree, NVLSTree, SHARP and NVLS
// passes).
std::uint64_t pass_op_count(const Pass& pass);
// Op counts saturate at kMaxOpCount rather than wrap: a loaded file may ask for absurd sizes, which the
// memory guard must see (any count this large refuses), and sums of a few of them still fit.
inline constexpr std::uint64_t kMaxOpCount = UINT64_MAX / 256;
inline std::uint64_t saturated_op_count(unsigned __int128 total) {
  return total > kMaxOpCount ? kMaxOpCount : static_cast<std::uint64_t>(total);
}

// The pipeline of a planner that gives local rank m of every node block m of the vector, and channel c part c
// of each block (nvls_tree, collnet, nvls_sharp): every member runs as many rounds on a channel (a switch
// instance needs all its members), about round_elems / g elements each (0: one round). Member m's part and
// its rounds are the same on every node, so partners across nodes agree on every range.
struct MemberRounds {
  std::uint64_t count = 0;  // the vector
  int g = 1, channels = 1, channel = 0;
  std::uint64_t round = 1;  // elements per round and member
  int rounds = 0;
  ElemRange part(int m) const;                  // member m's part on the channel
  Chunk at(int m, Buffer buffer, int k) const;  // its round k (empty past its end)
};
MemberRounds member_rounds(std::uint64_t count, int gpus_per_node, int channels, int channel,
                           std::uint64_t round_elems);

// Ops of channel c of an NVLSTree pass, over all its members (exact).
std::uint64_t nvls_tree_channel_ops(const NvlsTreePass& pass, int channel);
// Whether channels a and b of an NVLSTree pass do the same work: the same tree and the same parts.
bool nvls_tree_channels_alike(const NvlsTreePass& pass, int a, int b);
// The ops the cost walk expands: one channel of each kind (nvls_tree_channels_alike), two in an even split.
std::uint64_t nvls_tree_walked_ops(const NvlsTreePass& pass);

// Ops of channel c of a SHARP pass, over all its members (exact).
std::uint64_t sharp_channel_ops(const SharpPass& pass, int channel);
// Whether channels a and b of a SHARP pass do the same work: the same parts and rounds.
bool sharp_channels_alike(const SharpPass& pass, int a, int b);
// The ops the cost walk expands where the nodes are alike (uniform nodes and fabric): one node's of one
// channel of each kind, one channel in an even split. Nodes that differ are walked all together.
std::uint64_t sharp_walked_ops(const SharpPass& pass);

// Number of pipeline chunks for blocks of at most `largest_block` elements and a chunk of `chunk_elems` (0:
// one).
int chunk_rounds(std::uint64_t largest_block, std::uint64_t chunk_elems);
// Round k of `rounds` equal parts of `slice`, in `buffer` (the chunks a tree or chain pipelines).
inline Chunk round_chunk(ElemRange slice, int rounds, int k, Buffer buffer) {
  const ElemRange e = partition(slice, rounds, k);
  return Chunk{buffer, e.offset, e.count};
}

// The reduce step every tree shares: a rank receives its children's partial results for one chunk and sums
// them with its own input. The first child is received with RecvReduce straight into the sum; the others
// arrive concurrently into scratch slots and are added locally, so a rank with three children (a chain child
// and two tree children) waits one step, not three, as in NCCL where a tree step receives from all children
// at once.
struct ChildSlots {
  std::uint64_t base = 0;    // scratch offset of the slot of the second child
  std::uint64_t stride = 0;  // elements between consecutive children's slots (the buffer's count)
};
// Returns the op after which `sum` holds input + all children (kNoOp when there are no children: sum
// untouched).
OpId emit_reduce_children(ProgramBuilder& b, const std::vector<int>& children, int channel,
                          const Chunk& input, const Chunk& sum, const ChildSlots& slots);
// Scratch elements emit_reduce_children needs for `children` children.
inline std::uint64_t child_slots_size(std::size_t children, std::uint64_t count) {
  return children > 1 ? (children - 1) * count : 0;
}

}  // namespace cclab
