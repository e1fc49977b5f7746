// Pipelined chain reduce: chunk k flows along a chain that ends at the root (the topology ring, rotated);
// each rank adds its input to what it receives and passes the sum on. Intermediate sums live in scratch.
//   Steps:          P-1 per chunk; (P-1) + K - 1 for K chunks.
//   Bytes per rank: S sent by every rank but the root.
//   α-β cost:       (P-1+K-1)·(α + S/(K·B)) + S·γ per rank on the critical path.
#pragma once

#include <vector>

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// chains[c] lists all ranks, ending at the root.
Schedule chain_reduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& chains,
                      std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm chain_reduce_algorithm();

}  // namespace cclab::planners
