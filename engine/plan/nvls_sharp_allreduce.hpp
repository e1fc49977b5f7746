// NCCL's NVLS allreduce across nodes with in-network reduction (NVLS on Hopper and later where the network
// has SHARP, through the CollNet plugin): inside each node the GPUs reduce their ranges through the NVSwitch
// (NVLS, engine/plan/switch_pattern.hpp), local rank m of every node sums its range across nodes in one SHARP
// instance (every member naming the same range, engine/ir/schedule.hpp), and each GPU multicasts the result
// through the NVSwitch. Per round of a channel (about round_elems / g elements of the member's range), on two
// IR channels that make one network channel:
//   switch (2c):   SwitchReduce of the member's range (the node's sum, in the output); later, once the
//                  network's sum is back, SwitchStore of it into every GPU of the node;
//   network (2c+1): SwitchReduce of the node sum across nodes, in place (at most kPostAhead in flight).
// Rounds pipeline on one switch channel, round k + kPostAhead's reduce before round k's multicast: a round's
// way between the two is one SHARP instance (31 µs), where nvls_tree's is a tree's climb and descent, which
// is why nvls_tree runs its reduces and multicasts as streams of their own.
//   Steps:          per round 2 NVSwitch instances and one SHARP instance; about K + 2 pipelined.
//   Bytes per rank: through its NVSwitch port S + S/g each way (as nvls); through its NIC S/g each way.
//   α-β cost:       launch (25 µs) + max(S(1+1/g) / (B_port·nvlsEff), S/g / B_nic) + 31 µs.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// groups: the ranks of each node in local order, all the same size; `channels` channels; rounds of about
// `round_elems` elements of the vector (round_elems / g per member; 0: one round per channel).
CompactSchedule nvls_sharp_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                     int channels, std::uint64_t round_elems);

// About how many ops the cost walk expands at once (three per member, round and channel; one channel of
// each kind is walked, on one node where nodes are alike).
std::uint64_t nvls_sharp_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                      std::uint64_t round_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm nvls_sharp_allreduce_algorithm();

}  // namespace cclab::planners
