#include "engine/plan/collnet_chain_allreduce.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "engine/model/lower_bound.hpp"
#include "engine/plan/collnet_allreduce.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/ring_search.hpp"

namespace cclab::planners {

std::uint64_t collnet_chain_chunk_bytes(std::uint64_t bytes, int channels, int gpus_per_node,
                                        std::uint64_t ceiling) {
  if (ceiling == 0) return 0;
  constexpr std::uint64_t kChainChunkBytes = 256 << 10;  // enqueue.cc: min(256 KiB, stepSize·chunkSteps)
  return halved_chunk_bytes(std::min(ceiling, kChainChunkBytes), bytes, channels, gpus_per_node,
                            {{64, 128 << 10}, {8, 64 << 10}, {1, 32 << 10}});
}

std::vector<std::vector<int>> collnet_chains(const std::vector<std::vector<int>>& rings,
                                             const std::vector<std::vector<int>>& groups) {
  CCLAB_ENFORCE(!groups.empty(), "CollNet chains need a node");
  const std::vector<int>& node = groups[0];
  auto local = [&](int rank) {
    return static_cast<int>(std::find(node.begin(), node.end(), rank) - node.begin());
  };
  const int g = static_cast<int>(node.size());
  std::vector<std::vector<int>> chains;
  for (const std::vector<int>& ring : rings) {
    const int n = static_cast<int>(ring.size());
    // The ring's first rank of node 0 after a rank of another node (the ring crosses each node once).
    int entry = -1;
    for (int i = 0; i < n && entry < 0; ++i)
      if (local(ring[i]) < g && (g == n || local(ring[(i + n - 1) % n]) == g)) entry = i;
    CCLAB_ENFORCE(entry >= 0, "a ring that never enters node 0");
    std::vector<int> chain;
    for (int i = 0; i < n && static_cast<int>(chain.size()) < g; ++i)
      if (const int l = local(ring[(entry + i) % n]); l < g) chain.push_back(l);
    CCLAB_ENFORCE(static_cast<int>(chain.size()) == g, "a ring that misses GPUs of node 0");
    chains.push_back(std::move(chain));
  }
  return chains;
}

CompactSchedule collnet_chain_allreduce(const CollectiveSpec& spec,
                                        const std::vector<std::vector<int>>& groups,
                                        const std::vector<std::vector<int>>& chains,
                                        std::uint64_t round_elems) {
  const std::string algorithm = "collnet_chain";
  const int g = uniform_gpus_per_node(groups, spec, algorithm);
  if (spec.world_size == 1) return compact_world_of_one(spec, algorithm);
  CCLAB_ENFORCE(!chains.empty(), "collnet_chain needs a chain per channel");
  SharpPass pass;
  pass.intra = SharpIntra::Chain;
  pass.count = spec.count;
  pass.round_elems = round_elems;
  pass.gpus_per_node = g;
  pass.nodes = static_cast<int>(groups.size());
  pass.channel_count = static_cast<int>(chains.size());
  pass.chains = chains;
  // IR channels 2c (up the chain, and the head's SHARP reduce) and 2c + 1 (down) are one channel's lanes.
  return node_major_plan(spec, algorithm, groups, std::move(pass), 2);
}

std::uint64_t collnet_chain_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                         std::uint64_t round_elems) {
  const auto g = static_cast<std::uint64_t>(std::max(1, gpus_per_node));
  const auto c = static_cast<std::uint64_t>(std::max(1, channels));
  const std::uint64_t rounds = round_elems == 0 ? 1 : spec.count / c / round_elems + 1;
  return c * rounds * (4 * g - 3);
}

Algorithm collnet_chain_allreduce_algorithm() {
  // The chains are node 0's stretches of the rings, on 1.5 × the ring's channels (NCCL adds half again where
  // NVLink outpaces the network, src/graph/connect.cc, up to its 32).
  const auto channels_of = [](const CollectiveSpec& s, const topo::Topology& t) {
    const int per_node = s.world_size / std::max<int>(1, static_cast<int>(t.num_nodes()));
    return collnet_chain_channels(default_ring_channels(t), per_node);
  };
  return Algorithm{
      .name = "collnet_chain",
      .collective = Collective::AllReduce,
      .description =
          "NCCL's CollNetChain: a chain reduces each node's share up to its NIC's GPU, SHARP across, chain "
          "down",
      .supports =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            if (auto support = uniform_nodes(s, t, o); !support.ok) return support;
            if (auto why = collnet_unsupported(t)) return Support::no(*why);
            return Support::yes();
          },
      .compact =
          [channels_of](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            const auto groups = node_groups(t);
            const int channels = channels_or(o, channels_of(s, t));
            const std::uint64_t chunk = collnet_chain_chunk_bytes(
                s.bytes(), channels, static_cast<int>(groups[0].size()), o.chunk_bytes);
            CompactSchedule plan =
                collnet_chain_allreduce(s, groups, collnet_chains(search_rings(t, channels).rings, groups),
                                        chunk_elems(chunk, s.dtype));
            plan.params.channels = channels;
            plan.params.chunk_bytes = chunk;
            return plan;
          },
      .default_channels = channels_of,
      .unplanned_bound = collnet_lower_bound_s,  // the same bytes through a GPU's links and NIC
      .unplanned_ops =
          [channels_of](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            const int per_node = s.world_size / std::max<int>(1, static_cast<int>(t.num_nodes()));
            const int channels = channels_or(o, channels_of(s, t));
            return collnet_chain_ops_estimate(
                s, per_node, channels,
                chunk_elems(collnet_chain_chunk_bytes(s.bytes(), channels, per_node, o.chunk_bytes),
                            s.dtype));
          },
      .nccl = NcclAlgo::CollNetChain};
}

}  // namespace cclab::planners
