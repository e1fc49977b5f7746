// What NCCL's own tuner thinks a tree allreduce takes: the estimate it compares with the ring's to choose an
// algorithm when NCCL_ALGO is unset (NCCL 2.30, src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime). cclab's `nccl` selection asks it so that it picks what NCCL picks, then times the
// pick with its own model.
//
// Why it matters: NCCL rates every algorithm from the same per-channel graph bandwidth and converts a ring's
// bus bandwidth to algorithm bandwidth at nRanks / nsteps (= n / 2(n-1)), a tree's at half (`ratio *= .5`),
// after taking 0.92 of it. So at sizes where bandwidth decides, NCCL always runs the ring, even on two nodes,
// where a tree sends each node's data across the network once instead of the ring's 2(n-1)/n times and would
// be faster (cclab's model times that, and used to pick the tree there: `nccl` on two DGX A100 nodes with
// four HDR NICs predicted 156 GB/s of tree against a user's 86 GB/s measured with NCCL's default,
// NVIDIA/nccl#1048, about what a ring gets). Trees win NCCL's comparison through latency, at small and mid
// sizes.
#pragma once

#include <optional>

#include "engine/model/protocol.hpp"
#include "topology/topology.hpp"

namespace cclab {

struct NcclTreeEstimate {
  double bytes = 0;
  int ranks = 0;
  int nodes = 1;
  int channels = 1;
  // The channels' graph bandwidth as a bus bandwidth: what a ring over the same channels moves (NCCL searches
  // its ring and tree graphs at the same speeds on the machines cclab models).
  double graph_bus_Bps = 0;
  std::optional<topo::GpuArch> arch;
  bool pcie_inside = false;  // the GPUs of a node talk over PCIe (NCCL's PCI latencies), else NVLink
};

// NCCL's tuner time of a tree allreduce under `protocol` (LL, LL128 or Simple): its base latency, two
// traversals of the tree (intra-node chain at the NVLink or PCIe latency, log2(nodes) network hops), and the
// bytes at half the tree's bus bandwidth (0.92 of the graph's, then LL's 1/3.8 or LL128's 120/128 (7/9 on one
// node), each capped per channel as protocol_bandwidth_cap_Bps caps it). Latencies and factors are the
// constants of engine/model/protocol.cpp, which carry NCCL's.
double nccl_tuner_tree_allreduce_s(Protocol protocol, const NcclTreeEstimate& in);

}  // namespace cclab
