// Sendrecv as nccl-tests' sendrecv_perf runs it: every rank sends its whole buffer to rank r + 1 and receives
// rank r − 1's, one ncclSend and one ncclRecv in a group, a ring shift that measures point-to-point bandwidth
// on every link of the ring at once. The buffer is split over the channels (NCCL runs a peer's transfer on
// p2pnChannelsPerPeer channels, its collective channels: src/graph/paths.cc), each part in pipeline chunks.
//   Steps:          1; K chunks per channel.
//   Bytes per rank: S sent, S received: busbw = algbw.
//   α-β cost:       launch + α + S / B, B the route's bandwidth to the next rank.
#pragma once

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

Schedule shift_sendrecv(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm shift_sendrecv_algorithm();

}  // namespace cclab::planners
