// Pipelined binary-tree reduce: the broadcast tree run backwards; each rank sums its children's partial
// results with its input (in scratch, or in the output at the root) and sends the sum to its parent.
//   Steps:          D per chunk, D ≤ ⌈log2 P⌉; D + K - 1 pipelined.
//   Bytes per rank: S sent by every rank but the root.
//   α-β cost:       (D+K-1)·(α + 2·S/(K·B)) + 2·S·γ per interior rank.
#pragma once

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

Schedule tree_reduce(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm tree_reduce_algorithm();

}  // namespace cclab::planners
