// PAT reduce-scatter: Bruck's allgather (engine/plan/pat_allgather.hpp) run backwards, NCCL's PAT for
// reduce-scatter (one GPU per node). Every rank starts with partial sums of all P blocks (its input, copied
// to scratch). Steps go from the largest distance d = 2^k down to 1: rank r sends its partials of blocks
// r+d .. r+d+h-1 (mod P, h = min(d, P - d)) to rank r + d, which adds them into its own; where the allgather
// carries block b out from b along a tree, this carries every rank's contribution to b back along the same
// tree, combined on the way, so b arrives at rank b summed over all ranks once.
//   Steps:          ⌈log2 P⌉.
//   Bytes per rank: (P-1)/P · S sent, S the full (input) buffer.
//   α-β cost:       ⌈log2 P⌉·α + (P-1)/P·S·β + (P-1)/P·S·γ.
#pragma once

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

Schedule pat_reduce_scatter(const CollectiveSpec& spec);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm pat_reduce_scatter_algorithm();

}  // namespace cclab::planners
