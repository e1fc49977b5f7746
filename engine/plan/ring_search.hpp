// Ring orders from the topology, as NCCL searches its graph for them: every channel's ring crosses each node
// once, entering and leaving through the NIC the channel is given (channels spread over a node's NICs, and a
// ring leaves through the NIC it entered by when another GPU shares that NIC), and inside a node of direct
// GPU-to-GPU links (the DGX-1 hybrid cube-mesh) it follows those links, channel after channel spread over
// all of them. Nodes where every GPU reaches every other through one switch (NVSwitch, PCIe) keep the
// local-rank order, rotated per channel so that channels enter through different GPUs.
//
// The search, per distinct node shape (the GPU-to-GPU link matrix and each GPU's NIC; all nodes of a preset
// share one): channel c takes NIC c mod N and enters at the (c div N)-th GPU using it; on a mesh it takes,
// among the Hamiltonian paths (cycles on one node) over direct links from that GPU to the exit, the one
// whose slowest hop is fastest once the hops the earlier channels use are shared with them (ties: fewer
// channels on its busiest hop, then the first in local-rank order). Meshes of more than 10 GPUs, or with no
// such path, are treated as switched.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/model/nccl_tuning.hpp"
#include "topology/topology.hpp"

namespace cclab::planners {

struct RingSearch {
  std::vector<std::vector<int>> rings;  // per channel, world ranks in ring order
  std::vector<std::string> why;         // how node 0's part of each channel was chosen, for `cclab plan`
};

RingSearch search_rings(const topo::Topology& topology, int channels);

// Channels when the user gives none, and why: one per NIC of a node (NCCL opens at least as many channels as
// NICs), one per GPU of an NVSwitch node (every GPU enters one channel, as the rail-aligned rings of a DGX
// do), and on a mesh the count whose channels, spread over the links by search_rings, move the most data per
// step (channels x the slowest channel's bandwidth); never fewer than fill a GPU's NVLink
// (nvlink_fill_channels); at least one, with the reason when it is one.
int default_ring_channels(const topo::Topology& topology, std::string* why = nullptr);

// The channels whose thread blocks, each at NCCL's per-channel speed (channel_speed_cap_Bps), fill a GPU's
// NVLink bandwidth to the rest of its node: the least count that default_ring_channels gives, and trees too.
// 0 where the GPUs' architecture is unknown or they have no NVLink.
int nvlink_fill_channels(const topo::Topology& topology);

// A node's GPUs (`group`: world ranks in local order) in the orders of the Hamiltonian cycles over its direct
// NVLinks that the mesh search packs (DGX-1V 3, DGX-1 P100 2) where the node is such a mesh, so that a chain
// along one, from any GPU and wrapping, crosses NVLinks only, and chains on different cycles different
// NVLinks, as NCCL's tree search keeps its chains on NVLink and spreads them; the group alone where GPUs
// reach each other through a switch (NVSwitch, PCIe) or no such cycle exists.
std::vector<std::vector<int>> nvlink_chain_orders(const topo::Topology& topology,
                                                  const std::vector<int>& group);

// What NCCL's topology search (src/graph/search.cc, ncclTopoCompute and ncclTopoDupChannels) would leave in
// its ring, tree and NVLS graphs here, for its tuning model (engine/model/nccl_tuning.hpp), from node 0's
// shape: on one NVSwitch or NVLink node the ring search of default_ring_channels; across nodes a channel per
// NIC at the highest speed of NCCL's network speeds that the NIC's path (NCCL's PCIe rate or the port's line
// rate) and the GPUs' NVLink carry; NVLS (Hopper and later, NVSwitch nodes) a channel per head GPU. Not
// reproduced: PCIe-only nodes, nodes without NICs, unknown GPU architecture (comm empty, why_not says so).
struct NcclSearch {
  std::optional<NcclComm> comm;
  std::string why_not;
};
NcclSearch nccl_search(const topo::Topology& topology);

}  // namespace cclab::planners
