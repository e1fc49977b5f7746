// Halving-doubling allreduce (Rabenseifner 2004; MPICH's reduce_scatter + allgather allreduce):
// recursive-halving reduce-scatter, then recursive-doubling allgather among P' = 2^⌊log2 P⌋ ranks. For P not
// a power of two, the first 2r ranks (r = P - P') pair up first: each even one sends its whole input to its
// odd neighbour, which reduces it and takes part; at the end each odd one sends the result back.
//   Steps:          2·log2 P for powers of two; 2·⌊log2 P⌋ + 2 otherwise.
//   Bytes per rank: 2(P'-1)/P' · S for participants (+ S for the pairing ranks); the extra ranks send S.
//   α-β cost:       2·log2 P·α + 2(P-1)/P·S·β + (P-1)/P·S·γ for powers of two.
// One channel, unchunked: each step is one exchange with one partner, so there is nothing to pipeline.
#pragma once

#include "engine/ir/halving_doubling_layout.hpp"
#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

Schedule halving_doubling_allreduce(const CollectiveSpec& spec);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm halving_doubling_allreduce_algorithm();

}  // namespace cclab::planners
