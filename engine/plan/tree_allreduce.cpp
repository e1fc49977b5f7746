#include "engine/plan/tree_allreduce.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "engine/plan/ring_pattern.hpp"

namespace cclab::planners {

Tree double_binary_tree(const std::vector<std::vector<int>>& groups, int which_tree, int head) {
  const int nodes = static_cast<int>(groups.size());
  const Tree node_tree = which_tree == 0 ? binary_tree(nodes) : complementary_binary_tree(nodes);
  int world = 0;
  for (const auto& g : groups)
    world += static_cast<int>(g.size());
  std::vector<int> parent(world, -1);
  // The chain starts at local rank `head` and walks up (tree 0) or down (tree 1) through the node.
  auto chain = [&](int node) {
    const auto& g = groups[node];
    const int n = static_cast<int>(g.size());
    std::vector<int> c;
    for (int j = 0; j < n; ++j)
      c.push_back(g[((which_tree == 0 ? head + j : head - j) % n + n) % n]);
    return c;
  };
  for (int n = 0; n < nodes; ++n) {
    const auto c = chain(n);
    for (std::size_t j = 1; j < c.size(); ++j)
      parent[c[j]] = c[j - 1];
    if (node_tree.parent[n] >= 0) parent[c[0]] = chain(node_tree.parent[n])[0];
  }
  return tree_from_parents(std::move(parent));
}

TreePass tree_allreduce_pass(const std::vector<std::vector<int>>& groups, int channels, std::uint64_t count,
                             std::uint64_t chunk_elems) {
  CCLAB_ENFORCE(channels >= 1, "tree allreduce needs at least one channel");
  TreePass pass;
  pass.count = count;
  pass.chunk_elems = chunk_elems;
  // Channel c runs tree c mod 2 with its node chains headed by local rank c, so that channels leave nodes
  // through different GPUs and NICs, as the rings do.
  for (int c = 0; c < channels; ++c)
    pass.trees.push_back(double_binary_tree(groups, c % 2, c));
  return pass;
}

CompactSchedule tree_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                               int channels, std::uint64_t chunk_elems) {
  CompactSchedule s = one_lane(spec, "tree", tree_allreduce_pass(groups, channels, spec.count, chunk_elems));
  s.params.channels = channels;
  s.params.lanes_per_channel = 2;  // IR channels 2c (up) and 2c+1 (down) are one channel's two lanes
  return s;
}

}  // namespace cclab::planners
