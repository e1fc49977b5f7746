// NCCL's CollNetDirect allreduce (2.14+; the CollNet plugin over InfiniBand SHARP), planned as a SHARP pass
// (engine/ir/compact.hpp; its expansion, engine/ir/sharp_pass.cpp, is the pipelined program below):
// inside each node every GPU sums its block of the vector from all its peers over direct point-to-point
// messages, the network's switches sum those node sums across nodes (in-network reduction: local rank m of
// every node is one SHARP group, each GPU over its own NIC), and every GPU sends the result of its block back
// to its peers. Per round of a channel (about round_elems / g elements of the member's block):
//   scatter:  send each peer its block's share of the round, receive each peer's share of ours into scratch;
//   network:  add the shares up, then SwitchReduce the node sum: every member of the group names the same
//             range and gets its sum over all nodes (engine/ir/schedule.hpp), at most kPostAhead rounds in
//             flight (NCCL's buffer slots; SHARP operations are posted asynchronously, not one by one);
//   gather:   send the result to the peers, receive theirs.
// Each pair of local ranks has a scatter and a gather IR channel of its own per network channel, so that the
// streams a GPU runs at once are as many IR channels, and the α-β model splits its NVSwitch port among them
// as SimGrid does (with one IR channel for all of them it gave each stream the whole port, and the rounds'
// messages, admitted that fast, all shared the port in SimGrid: the first round came last).
// Where this differs from NCCL: NCCL's CollNetDirect gives each node's NIC-owning GPUs ("heads", up to 8)
// the blocks; here every GPU is a head (the DGX machines this models have a NIC per GPU).
//   Steps:          per round 2 intra-node messages and one SHARP instance; pipelined over K rounds per
//                   channel: about K + 3.
//   Bytes per rank: (g−1)/g·S to its peers twice (scatter and gather) over NVLink; S/g up to the network and
//                   S/g back (half what a ring sends over the NIC: 2(P−1)/P·S/g).
//   α-β cost:       max((g−1)/g·2S / B_nvlink, S/g / B_nic) + K·α_intra + α_sharp (31 µs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"
#include "topology/topology.hpp"

namespace cclab::planners {

// Channels when none are given: two, so that one channel's scatter overlaps the other's gather. (NCCL sizes
// CollNet's channels from its graph search; cclab's own choice.)
inline constexpr int kCollNetDefaultChannels = 2;

// groups: the ranks of each node in local order, all the same size; `channels` channels; rounds of about
// `round_elems` elements of the vector (round_elems / g per member; 0: one round per channel).
CompactSchedule collnet_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                  int channels, std::uint64_t round_elems);

// Why CollNet cannot run on `t`, or nullopt when it can: several nodes, and every GPU's NIC on a network
// switch with SHARP (topo::sharp_port, Vertex::sharp).
std::optional<std::string> collnet_unsupported(const topo::Topology& t);
// Why CollNetDirect cannot run on `t`: collnet_unsupported, or a GPU on no NVSwitch (NCCL turns Direct off
// without one).
std::optional<std::string> collnet_direct_unsupported(const topo::Topology& t);

// About how many ops the cost walk expands at once, from the plan's shape alone (per round and channel a
// rank runs 5(g−1) + 1; one node of one channel of each kind is walked where nodes are alike).
std::uint64_t collnet_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                   std::uint64_t round_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm collnet_allreduce_algorithm();

}  // namespace cclab::planners
