#include "engine/plan/ring_pattern.hpp"

#include "common/error.hpp"

namespace cclab::planners {

RingPass ring_pass(const std::vector<std::vector<int>>& rings, bool reduce_scatter, bool allgather,
                   std::uint64_t count, std::uint64_t chunk_elems) {
  CCLAB_ENFORCE(!rings.empty(), "a ring needs at least one channel");
  RingPass pass;
  pass.reduce_scatter = reduce_scatter;
  pass.allgather = allgather;
  pass.count = count;
  pass.chunk_elems = chunk_elems;
  pass.rings = rings;
  const std::size_t world = rings[0].size();
  pass.position.assign(rings.size(), std::vector<int>(world, -1));
  for (std::size_t c = 0; c < rings.size(); ++c) {
    CCLAB_ENFORCE(rings[c].size() == world, "ring {} has {} ranks for a world of {}", c, rings[c].size(),
                  world);
    for (std::size_t i = 0; i < world; ++i)
      pass.position[c].at(rings[c][i]) = static_cast<int>(i);
  }
  return pass;
}

RingPass ring_allreduce_pass(const std::vector<std::vector<int>>& rings, std::uint64_t count,
                             std::uint64_t chunk_elems) {
  // Partial sums accumulate in the output, where the reduced blocks also land and the allgather delivers.
  return ring_pass(rings, true, true, count, chunk_elems);
}

RingPass ring_reduce_scatter_pass(const std::vector<std::vector<int>>& rings, std::uint64_t count,
                                  std::uint64_t chunk_elems) {
  // Partial sums live in scratch (S elements), since each rank's output holds only its own block.
  RingPass pass = ring_pass(rings, true, false, count, chunk_elems);
  pass.partial = RolePlace{Buffer::Scratch};
  pass.reduced = RolePlace{Buffer::Output, true};
  pass.scratch_count = count;
  return pass;
}

RingPass ring_allgather_pass(const std::vector<std::vector<int>>& rings, std::uint64_t count,
                             std::uint64_t chunk_elems) {
  RingPass pass = ring_pass(rings, false, true, count, chunk_elems);
  pass.reduced = RolePlace{Buffer::Input, true};
  pass.gathered = RolePlace{Buffer::Output};
  return pass;
}

}  // namespace cclab::planners
