#include "engine/model/switch_ports.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/model/protocol.hpp"

namespace cclab {

ReductionPort reduction_port(const topo::Topology& t, int rank, bool in_network) {
  const topo::VertexId gpu = t.gpus().at(rank);
  if (in_network) {
    const std::optional<topo::SwitchPort> port = topo::sharp_port(t, gpu);
    if (!port)
      throw ConfigError(fmt::format("rank {} reduces in the network, but its GPU {} has no NIC on a switch",
                                    rank, t.vertex(gpu).name));
    if (!t.vertex(port->sw).sharp)
      throw ConfigError(
          fmt::format("rank {} reduces in the network, but switch {} (of GPU {}'s NIC) has no SHARP "
                      "(sharp: true in the topology, or the preset key sharp=1)",
                      rank, t.vertex(port->sw).name, t.vertex(gpu).name));
    return {*port, kSharpEfficiency, kSharpTripLatency_s};
  }
  const std::optional<topo::GpuArch> arch = t.gpu_arch();
  const double efficiency = arch ? nvls_efficiency(*arch) : 0.0;
  const std::optional<topo::SwitchPort> port = topo::nvswitch_port(t, gpu);
  if (!port || efficiency <= 0) {
    throw ConfigError(
        fmt::format("rank {} runs switch ops, but its GPU {} has no NVSwitch port with in-switch reduction "
                    "(Hopper or later)",
                    rank, t.vertex(gpu).name));
  }
  return {*port, efficiency, 2 * t.effective_latency_s(port->link)};
}

std::unordered_set<std::uint64_t> in_network_groups(const SwitchGroups& groups, const topo::Topology& t,
                                                    std::span<const int> global_rank) {
  auto node = [&](int r) { return t.node_of_rank(global_rank.empty() ? r : global_rank[r]); };
  std::unordered_set<std::uint64_t> out;
  for (const auto& [key, members] : groups) {
    const int first_node = node(members.begin()->first);
    for (const auto& [r, ops] : members) {
      if (node(r) != first_node) {
        out.insert(key);
        break;
      }
    }
  }
  return out;
}

}  // namespace cclab
