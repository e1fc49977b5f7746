// Pattern math shared by the planners: identity rings, node groups, binary trees, and the split of a buffer
// into channel slices, blocks and pipeline chunks. Pure functions; no schedule building here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/collective.hpp"
#include "engine/ir/compact.hpp"
#include "engine/ir/passes.hpp"
#include "topology/topology.hpp"

namespace cclab::planners {

// Blocks first .. first+n-1 (mod P) of the balanced partition of `count` elements into `world` blocks, in
// `buffer`, as at most two contiguous chunks (the run may wrap past the last block): Bruck's exchanges.
std::vector<Chunk> wrapped_blocks(std::uint64_t count, int world, int first, int n, Buffer buffer);

// Bruck's distances, 1, 2, 4, ... below `world`.
std::vector<int> bruck_distances(int world);

// Point-to-point collectives (alltoall, gather, scatter, sendrecv) as NCCL runs them: its p2p channels are
// its collective channels, and a peer gets several of them (p2pnChannelsPerPeer, src/graph/paths.cc). With
// `channels` IR channels and `peers` peers, peer i (0-based) runs on channels i, i + peers, i + 2·peers, ...
// below `channels` when there are at least as many channels as peers (channels / peers each), else on
// i mod channels.
std::vector<int> peer_channels(int peer, int peers, int channels);
// One transfer of `range` of `buffer` to or from a peer on its channels: part j of the range on channels[j],
// each in pipeline chunks of at most `chunk_elems` (0: whole). Sender and receiver cut the same pieces, so
// their k-th ops on a channel match.
struct P2pPiece {
  int channel;
  Chunk chunk;
};
std::vector<P2pPiece> p2p_pieces(ElemRange range, Buffer buffer, const std::vector<int>& channels,
                                 std::uint64_t chunk_elems);

// What an explicit plan takes to build and to verify when every rank ends holding a block of every other
// (allgather by hypercube or PAT, alltoall): its ops, kExplicitBytesPerOp each, and the verifier's symbolic
// contents, a segment per block of each rank's output, P² in all, about kVerifierBytesPerBlock each (157
// measured: `cclab plan --collective allgather --algo hypercube --size 1GiB` on 2,048 and 4,096 H100s, 1.24
// and 3.80 GB peak, against their ops and blocks; PAT's allgather, whose blocks arrive in fewer pieces, about
// 80: 347 MB on 2,048 single-GPU nodes, so the guard is conservative there by two). The blocks dominate at
// scale (16,384 ranks: 42 GB, where the ops are 6), so the ops alone are no guard. Throws ConfigError
// (require_within_memory_budget) when the two exceed the memory budget, naming `what` and the way out.
inline constexpr std::uint64_t kVerifierBytesPerBlock = 160;
void require_block_exchange_fits(const CollectiveSpec& spec, std::uint64_t ops, std::string_view what,
                                 std::string_view way_out);

// Ring orders from the topology: engine/plan/ring_search.hpp.
std::vector<std::vector<int>> identity_rings(int world_size, int channels);

// Ranks grouped by node, in local-rank order.
std::vector<std::vector<int>> node_groups(const topo::Topology& topology);
std::vector<std::vector<int>> singleton_groups(int world_size);
// The index of each GPU's NIC among its node's NICs, for the GPUs of one node (local-rank order), kept only
// where the GPU is among the nearest to that NIC (fewest hops): NCCL enters and leaves a node through GPUs on
// the NIC's own PCIe switch, never through one that reaches it across the CPU when another does not. -1 for
// a GPU without a NIC, or farther from its NIC than another GPU that uses it.
std::vector<int> group_nics(const topo::Topology& topology, const std::vector<int>& group);
// group_nics per group of node_groups.
std::vector<std::vector<int>> node_nics(const topo::Topology& topology,
                                        const std::vector<std::vector<int>>& groups);

// The in-order binary tree NCCL uses for its double binary tree: the parent of r is found by clearing r's
// lowest set bit b and setting the next one, (r ^ b) | (b << 1), or just clearing it when that falls outside
// 0..n-1. Rank 0 is the root; every rank has at most two children.
Tree binary_tree(int n);
// The complementary tree: mirrored (n even) or shifted by one (n odd), so that no rank is interior in both.
Tree complementary_binary_tree(int n);
// binary_tree relabelled so that `root` is the root (rank r plays position (r - root) mod n).
Tree rooted_binary_tree(int n, int root);

// Planners that pair local ranks across nodes (nvls_tree, collnet, nvls_sharp): the GPUs per node of
// `groups`, which must all be that size and together hold the spec's world.
int uniform_gpus_per_node(const std::vector<std::vector<int>>& groups, const CollectiveSpec& spec,
                          std::string_view algorithm);
// A world of one rank: its output is its input. True when `s` was that (and is now complete).
bool plan_world_of_one(Schedule& s);
// The compact plan of a world of one: that copy, as an explicit pass.
CompactSchedule compact_world_of_one(const CollectiveSpec& spec, const std::string& algorithm);
// A plan of one lane running `pass` (nvls_tree, collnet, nvls_sharp) over the nodes' ranks in node-major
// order, member n·g + m being groups[n][m]; lanes_per_channel IR channels make one network channel.
CompactSchedule node_major_plan(const CollectiveSpec& spec, const std::string& algorithm,
                                const std::vector<std::vector<int>>& groups, Pass pass,
                                int lanes_per_channel);
// The plan of collnet (Direct) or nvls_sharp (Nvls): one SHARP pass over the nodes' ranks in node-major
// order, `channels` channels of rounds of about round_elems / g elements (0: one round).
CompactSchedule sharp_allreduce_plan(const CollectiveSpec& spec, const std::string& algorithm,
                                     const std::vector<std::vector<int>>& groups, int channels,
                                     std::uint64_t round_elems, SharpIntra intra);
// Ops of a plan whose every rank runs `ops_per_round` ops per round and channel, with rounds of round_elems /
// g elements of each member's block (at least one round; 0: one round): the planners' op estimates.
std::uint64_t member_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                  std::uint64_t round_elems, std::uint64_t ops_per_round);

// MemberRounds, the pipeline of nvls_tree, collnet and nvls_sharp, is in engine/ir/passes.hpp (the
// NVLSTree pass expands with it).

// Elements per chunk for a chunk size in bytes (0 means unchunked).
std::uint64_t chunk_elems(std::uint64_t chunk_bytes, DType dtype);

// NCCL's enqueue sizes a pipelined tree or chain's chunk (src/enqueue.cc) from `chunk` down: for each halving
// in turn, halved while a channel's share of `bytes` would make fewer than chunks_per_depth·depth chunks and
// the chunk is above floor_bytes, so that the pipeline's fill stays a small part of it.
struct ChunkHalving {
  std::uint64_t chunks_per_depth;
  std::uint64_t floor_bytes;
};
std::uint64_t halved_chunk_bytes(std::uint64_t chunk, std::uint64_t bytes, int channels, int depth,
                                 std::initializer_list<ChunkHalving> halvings);

}  // namespace cclab::planners
