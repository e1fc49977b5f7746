// Pipelined chain broadcast: the root sends chunk k down a chain (the topology ring, starting at the root);
// each rank stores it and forwards it while chunk k+1 arrives. Channel c uses ring c's chain on its slice.
//   Steps:          P-1 per chunk; (P-1) + K - 1 for K chunks.
//   Bytes per rank: S sent by every rank but the last.
//   α-β cost:       (P-1+K-1)·(α + S/(K·B)) → S·β + (P-1)·α for many chunks.
#pragma once

#include <vector>

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// chains[c] lists all ranks, starting at the root.
Schedule chain_broadcast(const CollectiveSpec& spec, const std::vector<std::vector<int>>& chains,
                         std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm chain_broadcast_algorithm();

}  // namespace cclab::planners
