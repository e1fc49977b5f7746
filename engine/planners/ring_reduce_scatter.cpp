#include "engine/planners/ring_reduce_scatter.hpp"

#include "engine/planners/ring_pattern.hpp"

namespace cclab::planners {

Schedule ring_reduce_scatter(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                             std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "ring");
  for (auto& p : s.ranks)
    p.scratch_count = spec.count;
  RingRoles roles{.contribution =
                      [](int, ElemRange e) {
                        return Chunk{Buffer::Input, e.offset, e.count};
                      },
                  .partial =
                      [](int, ElemRange e) {
                        return Chunk{Buffer::Scratch, e.offset, e.count};
                      },
                  .reduced =
                      [&spec](int r, ElemRange e) {
                        return Chunk{Buffer::Output,
                                     e.offset - partition(spec.count, spec.world_size, r).offset, e.count};
                      },
                  .gathered = nullptr};
  emit_ring(s, rings, RingPasses{.reduce_scatter = true, .allgather = false}, spec.count, chunk_elems, roles);
  return s;
}

}  // namespace cclab::planners
