// Ring allgather: the second half of ring allreduce (engine/plan/ring_pattern.hpp).
//   Steps:          P-1 per chunk.
//   Bytes per rank: (P-1)/P · S sent, S the full (output) buffer.
//   α-β cost:       (P-1)·(α + S/(P·B)).
#pragma once

#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

CompactSchedule ring_allgather(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                               std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm ring_allgather_algorithm();

}  // namespace cclab::planners
