// PAT allgather: Bruck's log-step allgather (Bruck et al., IEEE TPDS 8(11) 1997), the data pattern of NCCL's
// PAT ("Parallel Aggregated Trees", NCCL 2.23+, allgather and reduce-scatter with one GPU per node). At step
// k rank r sends every block it holds, r .. r+h-1 (mod P, h = min(2^k, P - 2^k)), to rank r - 2^k and
// receives blocks r+2^k .. r+2^k+h-1 from rank r + 2^k, straight into their places in the output; after
// ⌈log2 P⌉ steps it holds all P. (NCCL's PAT also bounds its staging buffer by aggregating a fixed number of
// chunks per step, which changes how steps pipeline, not what moves.)
//   Steps:          ⌈log2 P⌉.
//   Bytes per rank: (P-1)/P · S sent, S the full (output) buffer, as the ring, in log2 P messages, not P-1.
//   α-β cost:       ⌈log2 P⌉·α + (P-1)/P·S·β: fewer latencies than the ring, the same bytes.
#pragma once

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

Schedule pat_allgather(const CollectiveSpec& spec);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm pat_allgather_algorithm();

}  // namespace cclab::planners
