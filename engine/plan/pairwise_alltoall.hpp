// Pairwise alltoall, as NCCL runs an alltoall: every rank posts a send to and a receive from each other rank
// in one group (nccl-tests' alltoall_perf: ncclGroupStart, ncclSend/ncclRecv per peer, ncclGroupEnd), and
// NCCL's p2p scheduler pairs them by offset, step d sending to rank r + d and receiving from r − d (src/
// enqueue.cc), all of them in flight at once on its p2p channels. Here offset d runs on its own IR channels
// (peer_channels, engine/plan/patterns.hpp: several per offset where there are more channels than peers, as
// NCCL gives a peer p2pnChannelsPerPeer of them), so the P − 1 exchanges of a rank are concurrent streams
// that split its links as NCCL's channels do; a rank's own block is a local copy on the channels of offset 0,
// as NCCL's schedule counts the rank itself among its peers. Blocks move in pipeline chunks.
//   Steps:          1 (every exchange at once); K chunks per block.
//   Bytes per rank: (P-1)/P · S sent and received, S the rank's whole buffer: the busbw factor (P-1)/P.
//   α-β cost:       launch + α + (P-1)/P·S / B, B the rank's port (NVSwitch) or its share of its node's NICs
//                   for the remote blocks: across N nodes of G GPUs, (P-G)/P of S leaves the node.
#pragma once

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// `channels` IR channels in all (fewer than P: offsets share them), blocks in chunks of `chunk_elems` (0:
// whole).
Schedule pairwise_alltoall(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm pairwise_alltoall_algorithm();

}  // namespace cclab::planners
