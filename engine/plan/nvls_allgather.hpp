// NVLS allgather inside one NVLink domain (engine/plan/switch_pattern.hpp): every member multicasts its block
// through the switch, a range per round, into every member's output.
//   Steps:          1 per round; K rounds per channel.
//   Bytes per rank: up its NVSwitch port S/P, down S, against (P-1)/P·S each way for a ring.
//   α-β cost:       launch + K·α + S/B, B the port's bandwidth times NCCL's nvlsEfficiency.
#pragma once

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

CompactSchedule nvls_allgather(const CollectiveSpec& spec, int channels, std::uint64_t round_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm nvls_allgather_algorithm();

}  // namespace cclab::planners
