#include "engine/plan/ring_reduce_scatter.hpp"

#include "engine/plan/ring_pattern.hpp"

namespace cclab::planners {

CompactSchedule ring_reduce_scatter(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                                    std::uint64_t chunk_elems) {
  return one_lane(spec, "ring", ring_reduce_scatter_pass(rings, spec.count, chunk_elems));
}

}  // namespace cclab::planners
