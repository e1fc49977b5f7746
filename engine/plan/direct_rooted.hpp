// Direct gather and scatter, as nccl-tests' gather_perf and scatter_perf run them on NCCL: every rank sends
// its block straight to the root (gather), or the root sends block b of its input straight to rank b
// (scatter), each side posting its sends and receives in one group (ncclSend/ncclRecv), so the root's P − 1
// transfers run at once on its p2p channels (peer_channels, engine/plan/patterns.hpp). The root's own block
// is a local copy on the channels of peer 0, as NCCL's p2p schedule counts the rank itself among its peers.
// One algorithm, two directions. Blocks move in pipeline chunks.
//   Steps:          1; K chunks per block.
//   Bytes per rank: (P-1)/P · S through the root, S its whole buffer; S/P at every other rank.
//   α-β cost:       launch + α + (P-1)/P·S / B, B the root's port (or its NIC for the remote blocks).
#pragma once

#include "engine/ir/schedule.hpp"
#include "engine/plan/algorithm.hpp"

namespace cclab::planners {

// `channels` IR channels at the root (fewer than P: peers share them; its own block is peer 0), chunks of
// `chunk_elems` (0: one).
Schedule direct_gather(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);
Schedule direct_scatter(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm direct_gather_algorithm();
Algorithm direct_scatter_algorithm();

}  // namespace cclab::planners
