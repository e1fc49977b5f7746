#include "engine/plan/nvls_sharp_allreduce.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "engine/ir/compact.hpp"
#include "engine/model/lower_bound.hpp"
#include "engine/plan/collnet_allreduce.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_sharp_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                     int channels, std::uint64_t round_elems) {
  return sharp_allreduce_plan(spec, "nvls_sharp", groups, channels, round_elems, SharpIntra::Nvls);
}

std::uint64_t nvls_sharp_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                      std::uint64_t round_elems) {
  // The cost walk expands one node's ops of one channel of each kind where the nodes are alike
  // (engine/model/compact_cost.cpp): one channel in an even split.
  CollectiveSpec node = spec;
  node.world_size = std::max(1, gpus_per_node);
  return member_ops_estimate(node, gpus_per_node, channels, round_elems, 3) /
         static_cast<std::uint64_t>(std::max(1, channels));
}

Algorithm nvls_sharp_allreduce_algorithm() {
  return across_nodes_algorithm(AcrossNodes{
      .name = "nvls_sharp",
      .description =
          "NCCL's NVLS across nodes with SHARP: NVLS reduce inside nodes, SHARP across, NVLS multicast",
      .unsupported =
          [](const topo::Topology& t) {
            if (auto why = nvls_unsupported(t)) return why;
            return collnet_unsupported(t);
          },
      .channels = kNvlsDefaultChannels,
      .planner = nvls_sharp_allreduce,
      .ops = nvls_sharp_ops_estimate,
      .bound = nvls_tree_lower_bound_s,  // NVLS's launch and port bytes bound it as well
      .nccl = NcclAlgo::Nvls});          // NCCL runs NVLS across nodes only with CollNet (SHARP) support
}

}  // namespace cclab::planners
