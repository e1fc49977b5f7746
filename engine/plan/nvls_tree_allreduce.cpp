#include "engine/plan/nvls_tree_allreduce.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "engine/ir/compact.hpp"
#include "engine/model/lower_bound.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_tree_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                    int channels, std::uint64_t round_elems) {
  const int g = uniform_gpus_per_node(groups, spec, "nvls_tree");
  if (spec.world_size == 1) return compact_world_of_one(spec, "nvls_tree");
  const int nodes = static_cast<int>(groups.size());
  NvlsTreePass pass;
  pass.count = spec.count;
  pass.round_elems = round_elems;
  pass.gpus_per_node = g;
  const std::vector<Tree> trees{binary_tree(nodes), complementary_binary_tree(nodes)};
  for (int c = 0; c < std::max(1, channels); ++c)
    pass.trees.push_back(trees[c % 2]);
  // IR channels 4c (reduce), 4c+1 (up), 4c+2 (down), 4c+3 (multicast)
  return node_major_plan(spec, "nvls_tree", groups, std::move(pass), 4);
}

std::uint64_t nvls_tree_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                     std::uint64_t round_elems) {
  // The cost walk expands one channel of each kind (engine/model/compact_cost.cpp): the two trees'.
  const std::uint64_t all = member_ops_estimate(spec, gpus_per_node, channels, round_elems, 7);
  const int c = std::max(1, channels);
  return all / static_cast<std::uint64_t>(c) * static_cast<std::uint64_t>(std::min(c, 2));
}

Algorithm nvls_tree_allreduce_algorithm() {
  // A double binary tree per local rank, each over its own NIC; NVLS's channel count.
  return across_nodes_algorithm(
      AcrossNodes{.name = "nvls_tree",
                  .description = "NCCL's NVLSTree: NVLS reduce-scatter inside nodes, a tree across nodes per "
                                 "local rank, NVLS allgather",
                  .unsupported = [](const topo::Topology& t) -> std::optional<std::string> {
                    if (t.num_nodes() < 2)
                      return "one node: nvls runs it (NCCL turns NVLSTree off there too)";
                    return nvls_unsupported(t);
                  },
                  .channels = kNvlsDefaultChannels,
                  .planner = nvls_tree_allreduce,
                  .ops = nvls_tree_ops_estimate,
                  .bound = nvls_tree_lower_bound_s,
                  .nccl = NcclAlgo::NvlsTree});
}

}  // namespace cclab::planners
