#include "engine/plan/ring_allreduce.hpp"

#include "engine/plan/ring_pattern.hpp"

namespace cclab::planners {

CompactSchedule ring_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                               std::uint64_t chunk_elems) {
  return one_lane(spec, "ring", ring_allreduce_pass(rings, spec.count, chunk_elems));
}

}  // namespace cclab::planners
