// NCCL's CollNetChain allreduce (the CollNet plugin over InfiniBand SHARP, src/device/all_reduce.h and
// src/graph/connect.cc), planned as a SHARP pass with a chain inside each node (engine/ir/compact.hpp; its
// expansion, engine/ir/sharp_pass.cpp): channel c takes part c of the vector through a chain of the node's
// GPUs whose head owns the channel's NIC; each round is reduced up the chain (every GPU adds its input to
// what the one below sent), the head hands the node's sum to the network, whose switches sum it across the
// nodes' heads (one SHARP group per channel), and the result comes back down the chain. Up and down are a
// tree's two lanes: round k + 1 climbs while round k descends.
// Where it differs from CollNetDirect (collnet_allreduce.hpp): one GPU of each node per channel talks to the
// network, and the node's traffic runs hop by hop along the chain, not all-to-all, so it needs no NVSwitch
// (NCCL turns Direct off without one, src/graph/tuning.cc) and its latency grows with the GPUs per node.
// Chains: node 0's stretch of each channel's ring (engine/plan/ring_search.hpp: the ring enters the node at
// the GPU nearest the channel's NIC and follows NVLinks on a mesh), the GPU it enters by first, as NCCL's
// chain graph (pattern TREE) starts at the NIC's GPU. Channels: collnet_chain_channels.
//   Steps:          per round 2(g − 1) hops and one SHARP trip; pipelined over K rounds: about 2(g − 1) + K.
//   Bytes per rank: over the C channels, S/C up and down on each channel where the GPU is neither head nor
//                   tail: 2(g − 1)/g·S where the heads rotate; the heads' NICs S/C each way per channel.
//   α-β cost:       max(2(g−1)/g·S / B_nvlink, S/g / B_nic) + 2(g−1)·α_intra (2.8 µs) + α_sharp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/plan/algorithm.hpp"
#include "topology/topology.hpp"

namespace cclab::planners {

// Channels: 1.5 × the ring's (`ring_channels`) where a node has several GPUs, as NCCL adds half again "to
// saturate intra-node bandwidth" (src/graph/connect.cc), at most its 32; the ring's with one GPU per node.
inline int collnet_chain_channels(int ring_channels, int gpus_per_node) {
  return gpus_per_node > 1 ? std::min(32, ring_channels + ring_channels / 2) : ring_channels;
}

// NCCL's CollNetChain chunk under Simple (src/enqueue.cc): from min(ceiling, 256 KiB), halved while a channel
// gets fewer than 64·g chunks (down to 128 KiB), 8·g (64 KiB) or g (32 KiB), g the chain's length.
std::uint64_t collnet_chain_chunk_bytes(std::uint64_t bytes, int channels, int gpus_per_node,
                                        std::uint64_t ceiling);

// Per channel, node 0's local ranks in the order of that channel's ring (`rings`: world ranks, as
// search_rings gives them), from the GPU by which the ring enters the node: the chain, its head first.
std::vector<std::vector<int>> collnet_chains(const std::vector<std::vector<int>>& rings,
                                             const std::vector<std::vector<int>>& groups);

// groups: the ranks of each node in local order, all the same size; chains: per channel, as collnet_chains;
// rounds of `round_elems` elements of a channel's part (0: one round).
CompactSchedule collnet_chain_allreduce(const CollectiveSpec& spec,
                                        const std::vector<std::vector<int>>& groups,
                                        const std::vector<std::vector<int>>& chains,
                                        std::uint64_t round_elems);

// About how many ops the cost walk expands, from the plan's shape alone: node 0's 4g − 3 per round of each
// channel (chains differ channel to channel).
std::uint64_t collnet_chain_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                         std::uint64_t round_elems);

// Its descriptor for the registry (engine/plan/algorithm.hpp).
Algorithm collnet_chain_allreduce_algorithm();

}  // namespace cclab::planners
