// NVLS allreduce inside one NVLink domain (engine/plan/switch_pattern.hpp): in each round every member
// reduces its range of its block through the switch, then multicasts the sum.
//   Steps:          2 per round (reduce, store); K rounds per channel.
//   Bytes per rank: no point-to-point sends. Through its NVSwitch port each way: S + S/P (up: the switch
//                   reads the member's copy of every range, then takes its multicast range; down: its
//                   reduced range, then every range of the multicasts), against 2(P-1)/P·S for a ring over
//                   the same port: (P+1)/(2(P-1)) of the ring's bytes, 9/14 at P = 8.
//   α-β cost:       launch + K·α + S(1+1/P)/B, B the port's bandwidth times NCCL's nvlsEfficiency.
#pragma once

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

CompactSchedule nvls_allreduce(const CollectiveSpec& spec, int channels, std::uint64_t round_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm nvls_allreduce_algorithm();

}  // namespace cclab::planners
