// Hierarchical allreduce, phases of lanes (engine/ir/compact.hpp), for N nodes of g GPUs:
//   1. ring reduce_scatter inside each node: local rank l ends with block l (S/g) reduced over the node;
//   2. allreduce of block l among the N GPUs of local rank l, one per node (ring or double binary tree), in
//   place;
//   3. ring allgather inside each node.
// All g GPUs of a node talk to the network at once, each through its own NIC (Horovod's hierarchical
// allreduce; NCCL's rail-aligned inter-node rings; UCC's split-rail).
//   Steps:          2(g-1) intra + inter (ring: 2(N-1); tree: 2·depth) per chunk.
//   Bytes per rank: 2(g-1)/g · S on NVLink/PCIe + 2(N-1)/N · S/g on the network (ring inter).
//   α-β cost:       2(g-1)(α_l + S/(g·B_l)) + 2(N-1)(α_r + S/(N·g·B_r)) + γ terms.
#pragma once

#include <string>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

enum class InterAlgorithm { Ring, Tree };

// groups: the ranks of each node in local order; all groups the same size. `channels` are the inter-node
// (and intra-node ring) channels.
CompactSchedule hierarchical_allreduce(const CollectiveSpec& spec,
                                       const std::vector<std::vector<int>>& groups, InterAlgorithm inter,
                                       int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm hierarchical_allreduce_algorithm();

}  // namespace cclab::planners
