// Leader-based hierarchical allreduce (Horovod's original hierarchical scheme; MPI's SMP-aware allreduce):
//   1. inside each node, a pipelined tree reduce to the leader (local rank 0);
//   2. ring allreduce among the N leaders, in place;
//   3. inside each node, a pipelined tree broadcast from the leader.
// Only one GPU per node (and so one NIC) talks to the network, which is why the split-rail form
// (hierarchical_allreduce.hpp) usually wins on multi-NIC nodes; this one wins when nodes have a single NIC.
//   Steps:          2·⌈log2 g⌉ intra + 2(N-1) inter per chunk.
//   Bytes per rank: S up the node tree and S per child down; the leader sends 2(N-1)/N · S on the network.
//   α-β cost:       2(D_g + K-1)(α_l + S/(K·B_l)) + 2(N-1)(α_r + S/(N·B_r)).
#pragma once

#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

CompactSchedule leader_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                 int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm leader_allreduce_algorithm();

}  // namespace cclab::planners
