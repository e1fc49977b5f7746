// Where a rank's switch ops (engine/ir/schedule.hpp) reduce, for the α-β model and the simulator alike. A
// group whose members share a node reduces inside its NVSwitch (NVLS): the GPU's NVSwitch port, at NCCL's
// nvlsEfficiency. A group with one member per node reduces in the network (InfiniBand SHARP, NCCL's CollNet):
// the GPU's NIC link to a SHARP switch (topo::sharp_port). A rank may be in groups of both kinds (NVLS inside
// its node and SHARP across nodes), each on IR channels of its own.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_set>
#include <vector>

#include "engine/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace cclab {

// SHARP aggregates at the switch's line rate (Mellanox SHARPv2 "streaming aggregation", Quantum HDR and
// later): the port's bandwidth is the NIC link's, as the link model gives it. An assumption for SHARPv1's
// low-latency mode, which aggregates small messages only.
inline constexpr double kSharpEfficiency = 1.0;
// One SHARP instance's trip up the switches' aggregation tree and back: NCCL's network latency for
// CollNetDirect under Simple (src/graph/tuning.cc, hwLatencies NET row, 31 µs), in place of the port link's.
inline constexpr double kSharpTripLatency_s = 31e-6;

struct ReductionPort {
  topo::SwitchPort port;
  double efficiency = 1.0;  // payload fraction of the port link's bandwidth
  double latency_s = 0;     // one instance's trip through the switch, both ways
};

// The port of `rank`'s GPU: its NVSwitch port, or with `in_network` its NIC's link to a SHARP switch. Throws
// ConfigError naming the GPU where there is none (no NVSwitch with in-switch reduction, no NIC, a switch
// without SHARP).
ReductionPort reduction_port(const topo::Topology& t, int rank, bool in_network);

// Of a schedule's switch groups (switch_groups), the keys of those whose members span nodes: those reduce in
// the network. global_rank maps the schedule's ranks to the topology's (empty: the same).
std::unordered_set<std::uint64_t> in_network_groups(const SwitchGroups& groups, const topo::Topology& t,
                                                    std::span<const int> global_rank = {});
// The key of `op`'s group (a switch op), as switch_groups keys it.
inline std::uint64_t group_key(const Op& op) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(op.peer)) << 16) | op.channel;
}

}  // namespace cclab
