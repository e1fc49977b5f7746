#include "engine/planners/ring_allreduce.hpp"

#include "engine/planners/ring_pattern.hpp"

namespace cclab::planners {

Schedule ring_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                        std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "ring");
  // Partial sums accumulate in the output, where the reduced blocks also land and the allgather delivers.
  auto in_output = [](int, ElemRange e) { return Chunk{Buffer::Output, e.offset, e.count}; };
  RingRoles roles{.contribution =
                      [](int, ElemRange e) {
                        return Chunk{Buffer::Input, e.offset, e.count};
                      },
                  .partial = in_output,
                  .reduced = in_output,
                  .gathered = in_output};
  emit_ring(s, rings, RingPasses{}, spec.count, chunk_elems, roles);
  return s;
}

}  // namespace cclab::planners
