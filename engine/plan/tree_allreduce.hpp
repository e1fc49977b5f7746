// Double binary tree allreduce, as NCCL builds it (Sanders, Speck & Träff 2009; NCCL 2.4 trees.cc):
// two complementary in-order binary trees over the nodes, so that with an even node count every node is
// interior in at most one of them (with an odd count, exactly one node is interior in both); inside a node
// the GPUs form a chain whose head joins the node tree. Channel c runs tree c mod 2 on its slice of the
// buffer, with chains headed by local rank c (tree 1 walks the chain the other way), so with two channels
// each tree carries half the data and with one channel per NIC every NIC carries a tree. Every chunk is
// reduced up the tree (children's data summed into the output, then sent to the parent) and broadcast back
// down; up and down use separate IR channels (2c and 2c+1) so that chunk k+1 goes up while chunk k comes
// down.
//   Steps:          2·D per chunk, D the depth of the rank tree: D = (g-1) + depth of the node tree, with
//                   depth ≤ ⌈log2 N⌉ for N nodes of g GPUs; pipelined over K chunks: 2·D + K - 1.
//   Bytes per rank: up to S/C·(1 + children) per channel; ≈ S per rank in total with two trees (each rank
//   sends
//                   its half up once and down to at most two children in the tree where it is interior).
//   α-β cost:       ≈ 2·D·α + 2·(S/2)·β·(pipelined), the bandwidth term NCCL models as algbw = busbw/2.
#pragma once

#include <vector>

#include "engine/plan/patterns.hpp"

namespace cclab::planners {

// Tree `which_tree` (0 or 1) over the node groups (ranks of each node in local order), with every node's
// chain starting at local rank `head` (mod the node's size).
Tree double_binary_tree(const std::vector<std::vector<int>>& groups, int which_tree, int head);

// The pass: channel c runs tree c mod 2 with its node chains headed by local rank c.
TreePass tree_allreduce_pass(const std::vector<std::vector<int>>& groups, int channels, std::uint64_t count,
                             std::uint64_t chunk_elems);

CompactSchedule tree_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                               int channels, std::uint64_t chunk_elems);

}  // namespace cclab::planners
