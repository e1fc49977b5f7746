#include "engine/plan/ring_reduce_scatter.hpp"

#include "engine/plan/ring_pattern.hpp"

namespace cclab::planners {

CompactSchedule ring_reduce_scatter(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                                    std::uint64_t chunk_elems) {
  return one_lane(spec, "ring", ring_reduce_scatter_pass(rings, spec.count, chunk_elems));
}

Algorithm ring_reduce_scatter_algorithm() {
  return Algorithm{
      .name = "ring",
      .collective = Collective::ReduceScatter,
      .description = "ring reduce-scatter, chunked, multi-channel",
      .supports = any_world,
      .compact = [](const CollectiveSpec& s, const topo::Topology& t,
                    const PlanOptions& o) { return ring_reduce_scatter(s, rings_for(t, o), chunk_of(o, s)); },
      .default_channels = ring_channels,
      .nccl = NcclAlgo::Ring};
}

}  // namespace cclab::planners
