// The pattern NVLS collectives share (NVLink SHARP, NCCL's NVLS algorithms, 2.17+, on Hopper and later GPUs
// whose NVSwitch supports multicast): member r owns block r of the balanced partition of the vector; channel
// c takes part c of every block, cut into rounds of about `round_elems` elements (round_elems / P per member,
// at least 1; 0: one round per channel); in each round every member reduces its sub-range through the switch
// (SwitchReduce: multimem.ld_reduce, the switch reads that range from every member and returns the sum)
// and/or multicasts it (SwitchStore: multimem.st, the switch writes it into every member). Every member runs
// as many rounds on a channel (a member whose part is shorter runs empty ops): an instance needs all of them.
// Rounds pipeline on their channel: a round's reduce starts while the previous round's store is on the wire,
// which uses the other direction of the GPU's port most.
//
// A round is what one channel moves through the switch per step. The planners of one NVLink domain size it by
// nvls_round_elems: each member's share is NCCL's NVLS chunk (NCCL_NVLS_CHUNKSIZE, 128 KiB), which NCCL
// gives each head, so a round grows with the domain (1 MiB at P = 8, 9 MiB on an NVL72 rack). Rounds much
// larger than that leave one direction of the port idle while the first round's reduce and the last
// round's store run; much smaller ones pay a step each for little data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/ir/compact.hpp"
#include "topology/topology.hpp"

namespace cclab::planners {

// NCCL's default NVLS channel count on Hopper (its init log: "NVLS multicast support is available on dev N
// (NVLS_NCHANNELS 16)").
inline constexpr int kNvlsDefaultChannels = 16;

// NCCL's NVLS channels inside one NVLink domain (NCCL 2.30, src/transport/nvls.cc, ncclNvlsTuning:
// NVLS_NCHANNELS_SM90 16 on Hopper, NVLS_NCHANNELS_SM100_NVL 24 on Blackwell and later); across nodes
// cclab keeps 16 (NCCL's Blackwell NVLSTree tuning there depends on the NICs' speed and the path to them).
int nvls_domain_channels(const topo::Topology& t);

// NCCL's NVLS chunk: what one head reduces and multicasts per step of a channel (NCCL_NVLS_CHUNKSIZE, 128
// KiB by default: src/transport/nvls.cc; src/enqueue.cc holds the Simple step to it).
inline constexpr std::uint64_t kNvlsChunkBytes = 128 << 10;

// The round switch_pattern takes for `members` GPUs of one NVLink domain: each member's share is NCCL's
// NVLS chunk, or the pipeline chunk where that is smaller (chunk_elems 0: one round per channel). NCCL
// halves its chunk for smaller collectives (to 64, 32, 16 KiB); cclab keeps 128 KiB (docs/accuracy.md,
// "Reading the tables": with the halving alone, 8-32 MiB on 8 H20 came out 13-15 % faster than measured).
std::uint64_t nvls_round_elems(std::uint64_t chunk_elems, DType dtype, int members);

// The NVLS pass (engine/ir/compact.hpp) of `spec` (its count is the full vector; its world the members),
// with the steps and places of `roles` (its reduce, store and role fields), on `channels` channels (at least
// one) in rounds of `round_elems`: one lane over every rank, named `algorithm`.
CompactSchedule switch_pattern(const CollectiveSpec& spec, std::string algorithm, NvlsPass roles,
                               int channels, std::uint64_t round_elems);

// Why NVLS cannot run on `t`, or nullopt when it can: its GPUs have in-switch reduction (protocol.hpp:
// nvls_efficiency > 0) and every node's GPUs have ports on one NVSwitch of that node (its NVLink domain).
std::optional<std::string> nvls_unsupported(const topo::Topology& t);

}  // namespace cclab::planners
