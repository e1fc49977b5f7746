// Ring allreduce = ring reduce-scatter + ring allgather (Patarasuk & Yuan 2009; NCCL's ring; Horovod's
// ring-allreduce), chunked and multi-channel (engine/plan/ring_pattern.hpp).
//   Steps:          2(P-1) per chunk; 2(P-1)+K-1 pipelined over K chunks per block.
//   Bytes per rank: 2(P-1)/P · S sent (and received), S the buffer size; exact when P divides the count.
//   α-β cost:       2(P-1)·(α + S/(P·B)) + (P-1)/P · S·γ.
#pragma once

#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// rings[c]: the ring order of channel c (a permutation of 0..P-1).
CompactSchedule ring_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& rings,
                               std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm ring_allreduce_algorithm();

}  // namespace cclab::planners
