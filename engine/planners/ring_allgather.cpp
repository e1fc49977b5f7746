#include "engine/planners/ring_allgather.hpp"

#include "engine/planners/ring_pattern.hpp"

namespace cclab::planners {

Schedule ring_allgather(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                        std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "ring");
  RingRoles roles{
      .contribution = nullptr,
      .partial = nullptr,
      .reduced =
          [&spec](int r, ElemRange e) {
            return Chunk{Buffer::Input, e.offset - partition(spec.count, spec.world_size, r).offset, e.count};
          },
      .gathered =
          [](int, ElemRange e) {
            return Chunk{Buffer::Output, e.offset, e.count};
          }};
  emit_ring(s, rings, RingPasses{.reduce_scatter = false, .allgather = true}, spec.count, chunk_elems, roles);
  return s;
}

}  // namespace cclab::planners
