#include "engine/plan/ring_allreduce.hpp"

#include "engine/plan/ring_pattern.hpp"

namespace cclab::planners {

CompactSchedule ring_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                               std::uint64_t chunk_elems) {
  return one_lane(spec, "ring", ring_allreduce_pass(rings, spec.count, chunk_elems));
}

Algorithm ring_allreduce_algorithm() {
  return Algorithm{
      .name = "ring",
      .collective = Collective::AllReduce,
      .description = "ring reduce-scatter + allgather, chunked, one ring per channel (rail-rotated)",
      .supports = any_world,
      .compact = [](const CollectiveSpec& s, const topo::Topology& t,
                    const PlanOptions& o) { return ring_allreduce(s, rings_for(t, o), chunk_of(o, s)); },
      .default_channels = ring_channels,
      .nccl = NcclAlgo::Ring};
}

}  // namespace cclab::planners
