#include "engine/plan/chain_broadcast.hpp"

#include <span>

#include "engine/plan/patterns.hpp"
#include "engine/plan/tree_broadcast.hpp"

namespace cclab::planners {

Schedule chain_broadcast(const CollectiveSpec& spec, const std::vector<std::vector<int>>& chains,
                         std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "chain");
  const int channels = static_cast<int>(chains.size());
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  for (int c = 0; c < channels; ++c) {
    const auto& chain = chains[c];
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const int parent = i > 0 ? chain[i - 1] : -1;
      const std::span<const int> child =
          i + 1 < chain.size() ? std::span<const int>(&chain[i + 1], 1) : std::span<const int>();
      broadcast_down(s.ranks[chain[i]], parent, child, c, partition(spec.count, channels, c), rounds);
    }
  }
  return s;
}

Algorithm chain_broadcast_algorithm() {
  return Algorithm{
      .name = "chain",
      .collective = Collective::Broadcast,
      .description = "pipelined chain from the root along the ring",
      .supports = any_world,
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return explicit_plan(chain_broadcast(s, rotated(rings_for(t, o), s.root, false), chunk_of(o, s)));
          },
      .default_channels = ring_channels,
      .nccl = NcclAlgo::Ring};  // NCCL's broadcast and reduce pipeline along its ring: a chain from the root
}

}  // namespace cclab::planners
