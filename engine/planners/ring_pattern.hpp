// The ring reduce-scatter and allgather passes that ring allreduce, ring reduce_scatter and ring allgather
// share.
//
// With P ranks in ring order, position i sends to i+1 and receives from i-1. The buffer is cut into C channel
// slices of every rank's block, each slice into K pipeline chunks. Reduce-scatter: at step s (0..P-2)
// position i sends block (i-s) and reduces block (i-s-1) into its partial sums; after P-1 steps it holds
// block (i+1) reduced over all ranks. Allgather: at step s it forwards block (i+1-s) and receives block
// (i-s). Block j belongs to rank ring[j-1], so that rank r ends with its own block, as reduce_scatter
// requires. Program order is step-major, chunk-minor, so chunk k of step s+1 leaves as soon as chunk k of
// step s arrived.
#pragma once

#include <functional>
#include <vector>

#include "engine/schedule.hpp"

namespace cclab::planners {

// Where data of a given role lives on a rank, for a range of the full (count-element) vector.
using Placement = std::function<Chunk(int rank, ElemRange range)>;

struct RingRoles {
  Placement contribution;  // the rank's own input for the range (reduce-scatter)
  Placement partial;       // running partial sums (reduce-scatter)
  Placement reduced;       // the rank's fully reduced own block; the allgather's source for it
  Placement gathered;      // where the allgather delivers every block
};

struct RingPasses {
  bool reduce_scatter = true;
  bool allgather = true;
};

// Appends the passes to every rank's program. rings[c] is the ring order of channel c.
void emit_ring(Schedule& schedule, const std::vector<std::vector<int>>& rings, RingPasses passes,
               std::uint64_t count, std::uint64_t chunk_elems, const RingRoles& roles);

}  // namespace cclab::planners
