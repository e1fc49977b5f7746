// NVLS allreduce: reduction inside the NVSwitch (NVLink SHARP; NCCL's NVLS algorithm, 2.17+, on Hopper and
// later GPUs whose NVSwitch supports multicast). Channel c owns a contiguous part of the vector, cut into
// rounds of `chunk_elems` elements (at least P), each split into P slices; in each round member r asks the
// switch for the sum of
// slice r over all members (SwitchReduce: multimem.ld_reduce) and multicasts it back to every member
// (SwitchStore: multimem.st). Rounds pipeline on their channel: a round's reduce starts while the previous
// round's store is still on the wire, which uses the other direction of the GPU's port.
//   Steps:          2 per round (reduce, store); K rounds per channel.
//   Bytes per rank: no point-to-point sends. Through its NVSwitch port each way: S + S/P (up: the switch
//                   reads the member's copy of every slice, then takes its reduced slice; down: the reduced
//                   slice, then every slice of the multicast), against 2(P-1)/P·S for a ring over the same
//                   port: (P+1)/(2(P-1)) of the ring's bytes, 9/14 at P = 8.
//   α-β cost:       launch + K·α + S(1+1/P)/B, B the port's bandwidth times NCCL's nvlsEfficiency.
// A round is what one channel moves through the switch per step: the default 1 MiB chunk at P = 8 gives
// 128 KiB slices, NCCL's NVLS chunk (NCCL_NVLS_CHUNKSIZE). Rounds much larger than that leave one direction
// of the port idle while the first round's reduce and the last round's store run.
// Within one NVLink domain only (one NVSwitch over all ranks); NCCL's NVLSTree across nodes is not planned.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace cclab::planners {

// NCCL's default NVLS channel count on Hopper (its init log: "NVLS multicast support is available on dev N
// (NVLS_NCHANNELS 16)").
inline constexpr int kNvlsDefaultChannels = 16;

Schedule nvls_allreduce(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

// Why NVLS cannot run the first `world` GPUs of `t`, or nullopt when it can: their architecture has in-switch
// reduction (protocol.hpp: nvls_efficiency > 0) and every one of them has a port on one common NVSwitch.
std::optional<std::string> nvls_unsupported(const topo::Topology& t, int world);

}  // namespace cclab::planners
