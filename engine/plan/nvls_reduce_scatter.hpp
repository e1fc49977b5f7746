// NVLS reduce-scatter inside one NVLink domain (engine/plan/switch_pattern.hpp): every member reduces its own
// block through the switch, a range per round, into its output.
//   Steps:          1 per round; K rounds per channel.
//   Bytes per rank: up its NVSwitch port S (the switch reads the member's copy of every block), down S/P,
//                   against (P-1)/P·S each way for a ring: no fewer bytes on the busier direction, but one
//                   step per round and no reduction on the GPU.
//   α-β cost:       launch + K·α + S/B, B the port's bandwidth times NCCL's nvlsEfficiency.
#pragma once

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

CompactSchedule nvls_reduce_scatter(const CollectiveSpec& spec, int channels, std::uint64_t round_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm nvls_reduce_scatter_algorithm();

}  // namespace cclab::planners
