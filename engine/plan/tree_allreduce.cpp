#include "engine/plan/tree_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/error.hpp"
#include "engine/plan/ring_pattern.hpp"
#include "engine/plan/ring_search.hpp"

namespace cclab::planners {

int tree_chain_head(const std::vector<int>& nics, int pair, int pairs) {
  const int n = static_cast<int>(nics.size());
  CCLAB_ENFORCE(n >= 1 && pairs >= 1 && pair >= 0 && pair < pairs, "tree chain head {} of {} in a node of {}",
                pair, pairs, n);
  std::vector<int> boundaries;  // local indices whose successor uses another NIC
  for (int h = 0; h < n; ++h) {
    const int next = (h + 1) % n;
    if (n > 1 && nics[h] >= 0 && nics[next] >= 0 && nics[h] != nics[next]) boundaries.push_back(h);
  }
  const auto spread = [&](int places) {
    return static_cast<int>(static_cast<long long>(pair) * places / pairs);
  };
  if (boundaries.empty()) return spread(n);
  return boundaries[spread(static_cast<int>(boundaries.size()))];
}

std::uint64_t tree_chunk_bytes(std::uint64_t bytes, int channels, int depth, std::uint64_t ceiling) {
  if (ceiling == 0) return 0;
  return halved_chunk_bytes(std::min(ceiling, kTreeStepBytes), bytes, channels, depth,
                            {{8, 128 << 10}, {4, 64 << 10}, {1, 32 << 10}});
}

Tree double_binary_tree(const std::vector<std::vector<int>>& groups, int which_tree,
                        const std::vector<int>& heads) {
  const int nodes = static_cast<int>(groups.size());
  CCLAB_ENFORCE(heads.size() == groups.size(), "{} chain heads for {} nodes", heads.size(), nodes);
  const Tree node_tree = which_tree == 0 ? binary_tree(nodes) : complementary_binary_tree(nodes);
  int world = 0;
  for (const auto& g : groups)
    world += static_cast<int>(g.size());
  std::vector<int> parent(world, -1);
  auto chain_at = [&](int node, int j) {
    const auto& g = groups[node];
    const int n = static_cast<int>(g.size());
    return g[(heads[node] + j) % n];
  };
  for (int n = 0; n < nodes; ++n) {
    const int size = static_cast<int>(groups[n].size());
    for (int j = 1; j < size; ++j)
      parent[chain_at(n, j)] = chain_at(n, j - 1);
    if (const int up = node_tree.parent[n]; up >= 0)
      parent[chain_at(n, 0)] = chain_at(up, std::min(1, static_cast<int>(groups[up].size()) - 1));
  }
  return tree_from_parents(std::move(parent));
}

TreePass tree_allreduce_pass(const std::vector<std::vector<int>>& groups,
                             const std::vector<std::vector<int>>& nics, int channels, std::uint64_t count,
                             std::uint64_t chunk_elems) {
  return tree_allreduce_pass(std::vector<ChainOrder>{{groups, nics}}, channels, count, chunk_elems);
}

TreePass tree_allreduce_pass(const std::vector<ChainOrder>& orders, int channels, std::uint64_t count,
                             std::uint64_t chunk_elems) {
  CCLAB_ENFORCE(channels >= 1, "tree allreduce needs at least one channel");
  CCLAB_ENFORCE(!orders.empty(), "tree allreduce needs the nodes' chain order");
  for (const auto& [groups, nics] : orders)
    CCLAB_ENFORCE(nics.empty() || nics.size() == groups.size(), "NICs of {} nodes for {} nodes", nics.size(),
                  groups.size());
  TreePass pass;
  pass.count = count;
  pass.chunk_elems = chunk_elems;
  const int pairs = (channels + 1) / 2;
  for (int p = 0; p < pairs; ++p) {
    const auto& [groups, nics] = orders[static_cast<std::size_t>(p) % orders.size()];
    // The pair's chains, then its trees (the last pair of an odd channel count has tree 0 alone).
    std::vector<int> heads;
    for (std::size_t n = 0; n < groups.size(); ++n)
      heads.push_back(
          tree_chain_head(nics.empty() ? std::vector<int>(groups[n].size(), -1) : nics[n], p, pairs));
    for (int tree = 0; tree < 2 && 2 * p + tree < channels; ++tree)
      pass.trees.push_back(double_binary_tree(groups, tree, heads));
  }
  return pass;
}

CompactSchedule tree_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                               const std::vector<std::vector<int>>& nics, int channels,
                               std::uint64_t chunk_elems) {
  return tree_allreduce(spec, std::vector<ChainOrder>{{groups, nics}}, channels, chunk_elems);
}

CompactSchedule tree_allreduce(const CollectiveSpec& spec, const std::vector<ChainOrder>& orders,
                               int channels, std::uint64_t chunk_elems) {
  CompactSchedule s = one_lane(spec, "tree", tree_allreduce_pass(orders, channels, spec.count, chunk_elems));
  s.params.channels = channels;
  s.params.lanes_per_channel = 2;  // IR channels 2c (up) and 2c+1 (down) are one channel's two lanes
  return s;
}

int tree_default_channels(const topo::Topology& t) {
  // Two trees per NIC: NCCL's tree graph has a channel per NIC (its chain's first GPU on that NIC), each
  // running both trees, so every NIC takes the parent's side in one channel and the children's in the next.
  // One pair per two NICs left each NIC on one side only, and a node that is interior in both trees (three
  // nodes: NCCL's btree is then a chain) put twice the bytes on half the NICs. On one node, never fewer than
  // fill a GPU's NVLink (a pair of trees per two of those channels); across nodes the NICs set a tree's pace,
  // and more channels would only cut the pipeline's chunks (two A100 nodes with two NICs, 4 MiB to 1 GiB:
  // 55 GB/s on 4 channels, 36 on 8).
  const int fill = t.num_nodes() == 1 ? nvlink_fill_channels(t) : 0;
  return std::max(2 * nics_per_node(t), fill + fill % 2);
}

Algorithm tree_allreduce_algorithm() {
  return Algorithm{
      .name = "tree",
      .collective = Collective::AllReduce,
      .description = "NCCL double binary tree over nodes, chains inside nodes, pipelined",
      .supports = any_world,
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            // On an NVLink mesh (DGX-1) each node's chains follow cycles of its NVLinks, a cycle per channel
            // pair in turn: in local-rank order they would cross the CPU between GPUs 3 and 4 and back to 0.
            const auto groups = node_groups(t);
            std::vector<std::vector<std::vector<int>>> cycles;  // per node, its chain orders
            for (const auto& group : groups)
              cycles.push_back(nvlink_chain_orders(t, group));
            std::vector<ChainOrder> orders(cycles[0].size());
            for (std::size_t k = 0; k < orders.size(); ++k) {
              for (const auto& node : cycles)
                orders[k].groups.push_back(node[k % node.size()]);
              orders[k].nics = node_nics(t, orders[k].groups);
            }
            const int channels = channels_or(o, tree_default_channels(t));
            std::size_t per_node = 1;
            for (const auto& g : groups)
              per_node = std::max(per_node, g.size());
            const int depth = static_cast<int>(per_node) - 1 +
                              static_cast<int>(std::floor(std::log2(static_cast<double>(groups.size()))));
            const std::uint64_t chunk = tree_chunk_bytes(s.bytes(), channels, depth, o.chunk_bytes);
            CompactSchedule plan = tree_allreduce(s, orders, channels, chunk_elems(chunk, s.dtype));
            plan.params.chunk_bytes = chunk;
            return plan;
          },
      .default_channels = [](const CollectiveSpec&,
                             const topo::Topology& t) { return tree_default_channels(t); },
      .nccl = NcclAlgo::Tree};
}

}  // namespace cclab::planners
