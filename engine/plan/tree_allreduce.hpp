// Double binary tree allreduce, as NCCL builds it (Sanders, Speck & Träff 2009; NCCL 2.4 trees.cc):
// two complementary in-order binary trees over the nodes, so that with an even node count every node is
// interior in at most one of them (with an odd count, exactly one node is interior in both); inside a node
// the GPUs form a chain. Channels come in pairs: channel 2p runs tree 0 and channel 2p+1 tree 1, each on its
// slice of the buffer, over the same node chains. A chain is NCCL's balanced tree pattern (treeToParent is
// the chain's first GPU, treeToChild0/1 its second): its head talks to the parent node, its second GPU (on
// another NIC) to the children nodes, so per pair a node's parent traffic of both trees (at most 2 slices)
// leaves by one NIC and its children traffic (at most 2 slices: a node is interior in one tree) by another.
// Giving the two trees of a pair the same NICs is what balances them: with each tree on NICs of its own, a
// node interior in tree 0 would push 3 slices through tree 0's NIC and 1 through tree 1's. Every chunk is
// reduced up the tree (children's data summed into the output, then sent to the parent) and broadcast back
// down; up and down use separate IR channels (2c and 2c+1) so that chunk k+1 goes up while chunk k comes
// down.
//   Steps:          2·D per chunk, D the depth of the rank tree: D ≤ (g-1) + 2·⌈log2 N⌉ for N nodes of g > 1
//                   GPUs (a node level is two hops: into the second GPU, on to the head); pipelined over K
//                   chunks: 2·D + K - 1.
//   Bytes per rank: up to S/C·(1 + children) per channel; ≈ S per rank in total with two trees (each rank
//                   sends its half up once and down to at most two children in the tree where it is
//                   interior).
//   NIC bytes:      ≤ 2·S/C per NIC and pair of channels, C/2 pairs spread over the node's NICs.
//   α-β cost:       ≈ 2·D·α + 2·(S/2)·β·(pipelined), the bandwidth term NCCL models as algbw = busbw/2.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/plan/algorithm.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

// Where pair `pair` of `pairs` starts its chain in a node whose GPUs (local order) use NICs `nics` (an index
// per GPU, -1 without one): a local index h whose successor h+1 (the chain's second GPU: the chain walks up
// from h and wraps) uses another NIC, the pairs spread evenly over such places so that every NIC is a head's
// or a second GPU's equally often. Without two NICs, the heads spread evenly over the GPUs.
int tree_chain_head(const std::vector<int>& nics, int pair, int pairs);

// NCCL's Simple step (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8): a tree channel's chunk under Simple, at most.
inline constexpr std::uint64_t kTreeStepBytes = std::uint64_t{512} << 10;

// The tree's pipeline chunk for `bytes` over `channels` channels of trees `depth` deep, as NCCL's enqueue
// sizes it (src/enqueue.cc, tree up-down under Simple): from min(ceiling, kTreeStepBytes), halved while a
// channel would get fewer than 8·depth chunks (down to 128 KiB), 4·depth (64 KiB) or depth (32 KiB), so
// that the pipeline's fill of 2·depth steps stays a small part of it. `depth` is NCCL's
// (GPUs per node - 1 + ⌊log2 nodes⌋). 0 (unchunked) stays 0.
std::uint64_t tree_chunk_bytes(std::uint64_t bytes, int channels, int depth, std::uint64_t ceiling);

// Tree `which_tree` (0 or 1) over the node groups (ranks of each node in local order): node n's chain runs
// from local index heads[n] up (wrapping); a node's head's parent is its parent node's second GPU.
Tree double_binary_tree(const std::vector<std::vector<int>>& groups, int which_tree,
                        const std::vector<int>& heads);

// The pass: channels 2p and 2p+1 run trees 0 and 1 on chains headed by tree_chain_head(nics of the node, p).
// `nics`: per node, the NIC index of each GPU (empty: no NICs known).
TreePass tree_allreduce_pass(const std::vector<std::vector<int>>& groups,
                             const std::vector<std::vector<int>>& nics, int channels, std::uint64_t count,
                             std::uint64_t chunk_elems);

CompactSchedule tree_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                               const std::vector<std::vector<int>>& nics, int channels,
                               std::uint64_t chunk_elems);

// The nodes' GPUs in the order their chains walk (groups), with each GPU's NIC index in that order (nics, as
// node_nics gives them; empty: none known).
struct ChainOrder {
  std::vector<std::vector<int>> groups;
  std::vector<std::vector<int>> nics;
};
// The same with channel pair p on orders[p mod orders.size()]: on an NVLink mesh each pair's chains run along
// another cycle of NVLinks, so that the pairs spread over the mesh's links as NCCL's tree search does.
TreePass tree_allreduce_pass(const std::vector<ChainOrder>& orders, int channels, std::uint64_t count,
                             std::uint64_t chunk_elems);
CompactSchedule tree_allreduce(const CollectiveSpec& spec, const std::vector<ChainOrder>& orders,
                               int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
// Two trees per NIC, and on one node never fewer than fill a GPU's NVLink (the rule's reasons in
// tree_allreduce.cpp).
int tree_default_channels(const topo::Topology& t);
Algorithm tree_allreduce_algorithm();

}  // namespace cclab::planners
