// Ring reduce_scatter: the first half of ring allreduce (engine/plan/ring_pattern.hpp).
//   Steps:          P-1 per chunk.
//   Bytes per rank: (P-1)/P · S sent, S the full (input) buffer.
//   α-β cost:       (P-1)·(α + S/(P·B)) + (P-1)/P · S·γ.
// Partial sums live in scratch (S elements), since each rank's output holds only its own block.
#pragma once

#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

CompactSchedule ring_reduce_scatter(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                                    std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm ring_reduce_scatter_algorithm();

}  // namespace cclab::planners
