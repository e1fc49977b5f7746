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

// Ops the pass expands to, over all its members (exact, in O(C·P) for ring and tree passes).
std::uint64_t pass_op_count(const Pass& pass);

// Number of pipeline chunks for blocks of at most `largest_block` elements and a chunk of `chunk_elems` (0:
// one).
int chunk_rounds(std::uint64_t largest_block, std::uint64_t chunk_elems);

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
