#include "engine/model/nccl_tuning.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "common/enum_names.hpp"

namespace cclab {

namespace {

constexpr NameTable<NcclAlgo, 7> kNames{{{NcclAlgo::Tree, "Tree"},
                                         {NcclAlgo::Ring, "Ring"},
                                         {NcclAlgo::CollNetDirect, "CollNetDirect"},
                                         {NcclAlgo::CollNetChain, "CollNetChain"},
                                         {NcclAlgo::Nvls, "NVLS"},
                                         {NcclAlgo::NvlsTree, "NVLSTree"},
                                         {NcclAlgo::Pat, "PAT"}}};

// NCCL's functions with an algorithm table (ncclFunc_t); -1 for the point-to-point collectives.
enum Function { kBroadcast, kReduce, kAllGather, kReduceScatter, kAllReduce };
int function_of(Collective c) {
  switch (c) {
    case Collective::Broadcast:
      return kBroadcast;
    case Collective::Reduce:
      return kReduce;
    case Collective::AllGather:
      return kAllGather;
    case Collective::ReduceScatter:
      return kReduceScatter;
    case Collective::AllReduce:
      return kAllReduce;
    default:
      return -1;
  }
}
int protocol_index(Protocol p) {
  return p == Protocol::LL ? 0 : p == Protocol::LL128 ? 1 : p == Protocol::Simple ? 2 : -1;
}
// log2Down (src/include/bitops.h): -1 for 0.
int log2_down(std::uint64_t n) {
  return n == 0 ? -1 : static_cast<int>(std::bit_width(n)) - 1;
}

// Trees are not perfectly sticking to the model for medium sizes: NCCL's static correction of the tree's
// bandwidth by size, powers of two from 64 B to 256 MiB, per protocol (ncclTopoGetAlgoTime).
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

}  // namespace

std::string_view nccl_algo_name(NcclAlgo algo) {
  return name_of(kNames, algo);
}

std::optional<NcclAlgo> parse_nccl_algo(std::string_view name) {
  const std::string lower = ascii_lowercase(name);
  if (lower == "collnet") return NcclAlgo::CollNetDirect;
  for (const auto& [algo, spelled] : kNames)
    if (ascii_lowercase(spelled) == lower) return algo;
  return std::nullopt;
}

std::string_view nccl_protocol_name(Protocol protocol) {
  return protocol == Protocol::LL       ? "LL"
         : protocol == Protocol::LL128  ? "LL128"
         : protocol == Protocol::Simple ? "Simple"
                                        : "";
}

NcclTuningModel::NcclTuningModel(NcclComm comm) : comm_(comm) {}

NcclTuningEntry NcclTuningModel::entry(Collective collective, NcclAlgo algo, Protocol protocol) const {
  const int f = function_of(collective), p = protocol_index(protocol);
  const int a = static_cast<int>(algo);
  const NcclComm& c = comm_;
  const NcclGraph& g = c.graph(algo);
  if (f < 0 || p < 0 || c.ranks <= 1 || g.channels <= 0) return {};
  const bool simple = protocol == Protocol::Simple;
  const bool nvls = algo == NcclAlgo::Nvls || algo == NcclAlgo::NvlsTree;
  const bool collnet = algo == NcclAlgo::CollNetDirect || algo == NcclAlgo::CollNetChain;
  // Which algorithms each function has (ncclTopoTuneModel's loops).
  if ((f == kBroadcast || f == kReduce) && algo != NcclAlgo::Ring) return {};
  if ((f == kReduceScatter || f == kAllGather) && algo != NcclAlgo::Pat && algo != NcclAlgo::Ring &&
      algo != NcclAlgo::Nvls && algo != NcclAlgo::CollNetDirect)
    return {};
  if (f == kAllReduce && algo == NcclAlgo::Pat) return {};
  if (nvls && !simple) return {};
  // PAT: Simple only, and by default only with one GPU per node (ncclPatEnable).
  if (algo == NcclAlgo::Pat && (!simple || c.nodes != c.ranks)) return {};
  // The default enables: NVLSTree off on one node; CollNet, and NVLS across nodes, need CollNet (SHARP),
  // which these graphs do not describe; LL128 only where the graph's GPUs talk over NVLink.
  if (c.nodes == 1 && algo == NcclAlgo::NvlsTree) return {};
  if (collnet || (algo == NcclAlgo::Nvls && c.nodes > 1)) return {};
  if (protocol == Protocol::LL128 && !c.nvlink) return {};

  const NcclTunerConstants& k = kNcclTunerConstants;
  const int arch = static_cast<int>(c.arch);
  const int scale = c.nodes <= 2 ? c.nodes - 1 : 2;
  const int ll_row = c.nodes == 1 ? arch : c.host == topo::HostCpu::Amd ? 1 : 0;
  const double ll_max = k.ll_max_bw_GBps[ll_row][scale];
  const double ppn = static_cast<double>(c.ranks) / c.nodes;
  const int nsteps = f == kAllReduce                          ? 2 * (c.ranks - 1)
                     : f == kReduceScatter || f == kAllGather ? c.ranks - 1
                                                              : c.ranks;
  const int ch = g.channels;

  double bw = c.nodes <= 2 ? g.bw_intra_GBps : g.bw_inter_GBps;
  if (nvls) {
    if (ch < 2) return {};  // NVLS needs at least two channels
    double intra = g.bw_intra_GBps * nvls_efficiency(c.arch) * (ch - 1) / ch;
    intra *= f == kAllReduce ? 2.0 : (ppn - 1) / ppn;  // an allreduce pipelines two operations
    const double inter = g.bw_inter_GBps * (c.nodes <= 2 && algo == NcclAlgo::NvlsTree ? 2 : 1);
    bw = std::min({intra, inter,
                   algo == NcclAlgo::NvlsTree ? k.per_channel_max_nvls_tree_GBps[arch][scale]
                                              : std::numeric_limits<double>::max()});
  }
  double bus = ch * bw;
  if (algo == NcclAlgo::Ring && protocol == Protocol::LL) bus = std::min(ll_max, bus * .5);
  if (algo == NcclAlgo::Ring && protocol == Protocol::LL128)
    bus = std::min(bus * .92, ch * k.per_channel_max_ring_ll128_GBps[arch][scale]);
  if (algo == NcclAlgo::Tree && f == kAllReduce)
    bus = std::min(bus * .92, ch * k.per_channel_max_tree_GBps[arch][scale]);
  if (algo == NcclAlgo::Tree && protocol == Protocol::LL) bus = std::min(bus / 3.8, ll_max);
  if (algo == NcclAlgo::Tree && protocol == Protocol::LL128)
    bus = std::min(bus * (c.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   ch * k.per_channel_max_tree_ll128_GBps[arch][scale]);
  if (algo == NcclAlgo::Pat) bus *= .75;
  // Bus bandwidth to algorithm bandwidth: a ring (and NVLS) moves nsteps/nRanks of the buffer per rank, a
  // tree half of it; reduce-scatter and allgather other than the ring's are modelled as algorithm bandwidth.
  if (!(algo != NcclAlgo::Ring && (f == kAllGather || f == kReduceScatter)))
    bus *= algo == NcclAlgo::Ring || nvls ? static_cast<double>(c.ranks) / nsteps : .5;

  NcclTuningEntry e;
  e.bandwidth_GBps = bus;
  e.latency_us = k.base_latency_us[a][p];
  const int intra_hw = c.nvlink ? 0 : 1;
  double intra_lat = k.hw_latency_us[intra_hw][a][p];
  // With one rank per node the network latency is fully exposed: the tree's. The graph's own network
  // latency (latencyInter, from the net plugin) is 0 for InfiniBand and RoCE.
  const double inter_lat = k.hw_latency_us[2][ppn == 1 ? static_cast<int>(NcclAlgo::Tree) : a][p];
  const int log2_nodes = log2_down(static_cast<std::uint64_t>(c.nodes));
  switch (algo) {
    case NcclAlgo::Ring: {
      const double lat = k.hw_latency_us[c.nodes == 1 ? intra_hw : 2][a][p];
      if (f == kBroadcast || f == kReduce) {
        e.latency_us += lat;  // the graph's channels are all alike (sameChannels)
      } else {
        // Inter-node rings still launch nsteps network posts: 1 µs each on Intel (and other) hosts, 2 on
        // AMD's, three times that under Simple.
        const double net_overhead =
            c.nodes > 1 ? (c.host == topo::HostCpu::Amd ? 2.0 : 1.0) * (simple ? 3 : 1) : 0.0;
        intra_lat = std::max(intra_lat, net_overhead);
        const int inter_steps = c.nodes == 1 ? 0 : f == kAllReduce ? 2 * (c.nodes - 1) : c.nodes - 1;
        e.latency_us += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
      }
      break;
    }
    case NcclAlgo::Tree:
      if (f == kAllReduce) e.latency_us += 2 * ((c.ranks / c.nodes - 1) * intra_lat + log2_nodes * inter_lat);
      break;
    case NcclAlgo::Nvls:
      e.latency_us = intra_lat + (c.nodes > 1 ? inter_lat : 0);
      break;
    case NcclAlgo::NvlsTree:
      e.latency_us += intra_lat + 2 * log2_nodes * inter_lat;
      break;
    case NcclAlgo::Pat:
      e.latency_us += log2_nodes * (inter_lat / 3.5) + c.ranks * 2.8;
      break;
    default:
      break;
  }
  return e;
}

std::optional<double> NcclTuningModel::time_us(Collective collective, NcclAlgo algo, Protocol protocol,
                                               std::uint64_t bytes) const {
  const NcclTuningEntry e = entry(collective, algo, protocol);
  if (e.bandwidth_GBps <= 0) return std::nullopt;
  double bw = e.bandwidth_GBps, lat = e.latency_us;
  const int p = protocol_index(protocol);
  const int log_size = log2_down(bytes >> 6);
  const bool allreduce = collective == Collective::AllReduce;
  if (algo == NcclAlgo::Tree && allreduce && log_size >= 0 && log_size < 23)
    bw *= kTreeCorrection[p][log_size];
  if (algo == NcclAlgo::NvlsTree && allreduce && log_size >= 0 && log_size < 24 &&
      comm_.arch == topo::GpuArch::Blackwell && comm_.host != topo::HostCpu::Arm)
    bw *= kTreeCorrection[p][log_size];
  // The plateau of a ring across nodes: comm->nChannels is the ring graph's channels doubled by
  // ncclTopoPostset (at most 64).
  const int comm_channels = std::min(64, 2 * std::max(1, comm_.graph(NcclAlgo::Ring).channels));
  if (algo == NcclAlgo::Ring && protocol == Protocol::Simple && comm_.nodes > 1 && allreduce &&
      bytes / (static_cast<std::uint64_t>(comm_channels) * comm_.ranks) >= 64)
    lat *= comm_.arch == topo::GpuArch::Volta ? 1.9 : 1.4;
  return lat + static_cast<double>(bytes) / (1000.0 * bw);
}

}  // namespace cclab
