#include "engine/plan/collnet_allreduce.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/ir/compact.hpp"
#include "engine/model/lower_bound.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

CompactSchedule collnet_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                  int channels, std::uint64_t round_elems) {
  return sharp_allreduce_plan(spec, "collnet", groups, channels, round_elems, SharpIntra::Direct);
}

std::optional<std::string> collnet_unsupported(const topo::Topology& t) {
  if (t.num_nodes() < 2) return "one node: there is no network to reduce in (NCCL runs CollNet across nodes)";
  for (const topo::VertexId gpu : t.gpus()) {
    const std::optional<topo::SwitchPort> port = topo::sharp_port(t, gpu);
    if (!port) return fmt::format("GPU {} has no NIC on a network switch", t.vertex(gpu).name);
    if (!t.vertex(port->sw).sharp) {
      return fmt::format("switch {} (of GPU {}'s NIC) has no SHARP (sharp: true, or the preset key sharp=1)",
                         t.vertex(port->sw).name, t.vertex(gpu).name);
    }
  }
  return std::nullopt;
}

std::optional<std::string> collnet_direct_unsupported(const topo::Topology& t) {
  if (auto why = collnet_unsupported(t)) return why;
  // NCCL turns CollNetDirect off where the system has no NVSwitch (src/graph/tuning.cc, nvsCount == 0): its
  // all-to-all inside the node needs one; CollNetChain runs there.
  for (const topo::VertexId gpu : t.gpus())
    if (!topo::nvswitch_port(t, gpu))
      return fmt::format(
          "GPU {} is on no NVSwitch (NCCL runs CollNetDirect on NVSwitch nodes only; "
          "collnet_chain runs here)",
          t.vertex(gpu).name);
  return std::nullopt;
}

std::uint64_t collnet_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                   std::uint64_t round_elems) {
  // The cost walk expands one node's ops of one channel of each kind where the nodes are alike
  // (engine/model/compact_cost.cpp): one channel in an even split.
  const auto g = static_cast<std::uint64_t>(std::max(1, gpus_per_node));
  CollectiveSpec node = spec;
  node.world_size = std::max(1, gpus_per_node);
  return member_ops_estimate(node, gpus_per_node, channels, round_elems, 5 * (g - 1) + 1) /
         static_cast<std::uint64_t>(std::max(1, channels));
}

Algorithm collnet_allreduce_algorithm() {
  return across_nodes_algorithm(
      AcrossNodes{.name = "collnet",
                  .description = "NCCL's CollNetDirect: direct reduce-scatter inside nodes, SHARP in-network "
                                 "allreduce across, gather",
                  .unsupported = collnet_direct_unsupported,
                  .channels = kCollNetDefaultChannels,
                  .planner = collnet_allreduce,
                  .ops = collnet_ops_estimate,
                  .bound = collnet_lower_bound_s,
                  .nccl = NcclAlgo::CollNetDirect});
}

}  // namespace cclab::planners
