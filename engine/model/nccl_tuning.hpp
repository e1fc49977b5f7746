// NCCL's own tuning model: how NCCL itself picks an algorithm and a protocol for each collective call (NCCL
// 2.30, NVIDIA/nccl master of June 2026: src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime).
// NCCL estimates every algorithm × protocol as latency + bytes / bandwidth from its topology search's graphs
// (per algorithm: channels and a per-channel speed inside and across nodes) and a table of constants, and
// runs the cheapest. That estimate is not what cclab predicts (the α-β model and SimGrid time the schedule
// itself); it is what decides *which* schedule NCCL runs, so `nccl` selections follow it, and where NCCL's
// estimate misjudges (a tree that would be faster than the ring it picks), cclab predicts what NCCL runs.
//
// The constants are NCCL's (ncclTunerConstantsDefaults), kept here once: the protocol model
// (engine/model/protocol.cpp) reads its latencies and ceilings from the same table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/ir/collective.hpp"
#include "engine/model/protocol.hpp"
#include "topology/topology.hpp"

namespace cclab {

// NCCL's algorithms in its own order (NCCL_ALGO_TREE = 0 ... NCCL_ALGO_PAT = 6).
enum class NcclAlgo { Tree, Ring, CollNetDirect, CollNetChain, Nvls, NvlsTree, Pat };
inline constexpr int kNcclAlgoCount = 7;
std::string_view nccl_algo_name(NcclAlgo algo);  // NCCL_ALGO's spelling: Tree, Ring, ..., PAT
// From an NCCL_ALGO name in any case (CollNet for CollNetDirect); nullopt when it is none.
std::optional<NcclAlgo> parse_nccl_algo(std::string_view name);
// A protocol in NCCL_PROTO's spelling (LL, LL128, Simple), as NCCL's logs print it; "" for Raw and Auto.
std::string_view nccl_protocol_name(Protocol protocol);

// ncclTunerConstantsDefaults (src/graph/tuning.cc), µs and GB/s. Protocol index: LL 0, LL128 1, Simple 2;
// hardware index: NVLink 0, PCIe 1, network 2; architecture rows Volta, Ampere, Hopper, Blackwell (its
// compCapIndex); scale columns one node, two, more.
struct NcclTunerConstants {
  double base_latency_us[kNcclAlgoCount][3];
  double hw_latency_us[3][kNcclAlgoCount][3];
  double ll_max_bw_GBps[4][3];  // rows by GPU on one node; across nodes row 0 Intel (any non-AMD), 1 AMD
  double per_channel_max_ring_ll128_GBps[4][3];
  double per_channel_max_tree_ll128_GBps[4][3];
  double per_channel_max_tree_GBps[4][3];
  double per_channel_max_nvls_tree_GBps[4][3];
};
inline constexpr NcclTunerConstants kNcclTunerConstants = {
    // baseLatencies: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT × LL, LL128, Simple.
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}},
    // hwLatencies: NVLink, PCIe, network; each by algorithm and protocol.
    {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
     {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
     {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}},
    // llMaxBws
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
    // perChMaxRingLL128Bws
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
    // perChMaxTreeLL128Bws
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
    // perChMaxTreeBws
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
    // perChMaxNVLSTreeBws
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}},
};

// One algorithm's graph as NCCL's topology search leaves it and its tuning model reads it (struct
// ncclTopoGraph: nChannels, bwIntra, bwInter, after ncclTopoDupChannels).
struct NcclGraph {
  int channels = 0;  // 0: no graph, the algorithm does not run here
  double bw_intra_GBps = 0;
  double bw_inter_GBps = 0;
};

// What the tuning model reads of a communicator.
struct NcclComm {
  topo::GpuArch arch = topo::GpuArch::Hopper;
  std::optional<topo::HostCpu> host;  // AMD hosts take LL's AMD row and a 2 µs network overhead
  int nodes = 1;
  int ranks = 1;
  bool nvlink = true;  // the graphs run over NVLink inside a node (typeIntra NVL), else PCIe
  // The graphs, by NcclAlgo: ring and tree; NVLS on NVSwitch nodes of Hopper and later; NVLSTree reads NVLS's
  // graph and PAT the tree's, as in NCCL; CollNet has none here (channels 0), so it is never priced.
  std::array<NcclGraph, kNcclAlgoCount> graphs{};
  const NcclGraph& graph(NcclAlgo a) const { return graphs[static_cast<int>(a)]; }
};

// One entry of NCCL's table (what NCCL_DEBUG_SUBSYS=TUNING prints as latency/bandwidth): latency in µs and
// the algorithm bandwidth in GB/s (bus bandwidth times NCCL's ratio for the algorithm); 0: off.
struct NcclTuningEntry {
  double latency_us = 0;
  double bandwidth_GBps = 0;
};

class NcclTuningModel {
 public:
  explicit NcclTuningModel(NcclComm comm);
  const NcclComm& comm() const { return comm_; }
  // The table entry (ncclTopoTuneModel, with its default enables: NVLSTree off on one node, NVLS across nodes
  // and CollNet off without CollNet, LL128 off where typeIntra is not NVLink). Collectives NCCL has no
  // algorithm table for (alltoall, gather, scatter, sendrecv) and Raw or Auto are off.
  NcclTuningEntry entry(Collective collective, NcclAlgo algo, Protocol protocol) const;
  // ncclTopoGetAlgoTime for one operation of `bytes` (nccl-tests' size): µs, or nullopt where it is off.
  // Includes the tree's per-size correction factors and the ring's plateau factor across nodes.
  std::optional<double> time_us(Collective collective, NcclAlgo algo, Protocol protocol,
                                std::uint64_t bytes) const;

 private:
  NcclComm comm_;
};

}  // namespace cclab
