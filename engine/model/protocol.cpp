#include "engine/model/protocol.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "engine/model/nccl_tuning.hpp"

namespace cclab {
namespace {

constexpr double us = 1e-6;

// Source of the latencies: NCCL 2.30 (NVIDIA/nccl master, June 2026), src/graph/tuning.cc,
// ncclTunerConstantsDefaults: baseLatencies (ring row) and hwLatencies (ring rows for NVLINK, PCI, NET), in
// µs. Wire efficiencies: the LL line format (NVIDIA/nccl src/include/device.h: a 16-byte line of two 4-byte
// data words and two 4-byte flags) and the LL128 line (NCCL_LL128_LINESIZE 128 bytes with one 8-byte flag
// word); NCCL's tuning model scales the ring's bus bandwidth by 0.5 for LL and by 0.92 for LL128.
// The numbers are read from engine/model/nccl_tuning.hpp, which keeps NCCL's table as NCCL lays it out.
constexpr ProtocolConstants from_table(double wire_efficiency, NcclAlgo algo, int protocol) {
  const NcclTunerConstants& k = kNcclTunerConstants;
  const int a = static_cast<int>(algo);
  return {wire_efficiency,
          k.base_latency_us[a][protocol] * us,
          {k.hw_latency_us[0][a][protocol] * us, k.hw_latency_us[1][a][protocol] * us,
           k.hw_latency_us[2][a][protocol] * us}};
}
constexpr int kLLIndex = 0, kLL128Index = 1, kSimpleIndex = 2;
constexpr ProtocolConstants kRaw{1.0, 0.0, {0, 0, 0}};
constexpr ProtocolConstants kLL = from_table(0.5, NcclAlgo::Ring, kLLIndex);
constexpr ProtocolConstants kLL128 = from_table(0.92, NcclAlgo::Ring, kLL128Index);
constexpr ProtocolConstants kSimple = from_table(1.0, NcclAlgo::Ring, kSimpleIndex);

// The tree rows of the same tables. Bandwidth (tuning.cc, the tree allreduce): every protocol's bus
// bandwidth times 0.92, then LL divided by 3.8 and LL128 times 120/128 across nodes (7/9 inside one node,
// where NCCL's tree is a chain; the multi-node factor is used: trees are what NCCL runs across nodes).
// Not taken: treeCorrectionFactor, NCCL's per-size correction of its own closed formula, which the
// recurrence replaces by timing the pipeline itself.
constexpr ProtocolConstants kTreeLL = from_table(0.92 / 3.8, NcclAlgo::Tree, kLLIndex);
constexpr ProtocolConstants kTreeLL128 = from_table(0.92 * 120 / 128, NcclAlgo::Tree, kLL128Index);
constexpr ProtocolConstants kTreeSimple = from_table(0.92, NcclAlgo::Tree, kSimpleIndex);

// NVLS (in-switch reduction) runs under Simple only. NCCL's tuning model gives it a base latency of 0 and an
// NVLink latency of 25 µs for the whole collective (hwLatencies NVLS row, `lat = intraLat` on one node): the
// launch here; its per-instance cost is the trip through the switch (the port's latency both ways). Across
// nodes (nvls_tree) each tree message on the network costs NVLSTree's network latency, 20.9 µs (NCCL's
// `lat += intraLat + 2·log2(nNodes)·interLat`: one per tree level up and down).
constexpr ProtocolConstants kNvlsSimple{
    1.0,
    kNcclTunerConstants.hw_latency_us[0][static_cast<int>(NcclAlgo::Nvls)][kSimpleIndex] * us,
    {0, 0, kNcclTunerConstants.hw_latency_us[2][static_cast<int>(NcclAlgo::NvlsTree)][kSimpleIndex] * us}};

// PAT runs under Simple only (its LL and LL128 latencies are 0 in the table): base latency 8.0 µs, step
// latency NVLink 4.0, PCIe 4.0, network 14 µs, and its bus bandwidth times 0.75 (tuning.cc: `busBw *= 0.75`
// for PAT), taken as its wire efficiency. (NCCL's PAT latency formula, log2(nNodes)·interLat/3.5 +
// nRanks·2.8, is its closed form of the same steps; the walk times them itself.)
constexpr ProtocolConstants kPatSimple = from_table(0.75, NcclAlgo::Pat, kSimpleIndex);

// CollNet (in-network reduction) runs under Simple only (its LL and LL128 rows are 0). NCCL's CollNetDirect
// row: base latency 0, NVLink and PCIe 3.7 µs (its point-to-point steps inside the node), network 31 µs (the
// SHARP trip, which engine/model/switch_ports.hpp gives each instance). Its bandwidth factors (busBw divided
// by f - (f-1)/2 with f = GPUs per node / channels, 0.85 on Hopper) are NCCL's closed form of the intra-node
// steps that the walk times itself.
constexpr ProtocolConstants kCollNetSimple = from_table(1.0, NcclAlgo::CollNetDirect, kSimpleIndex);
// NCCL's CollNetChain row: base latency 0, NVLink and PCIe 2.8 µs a step of the chain, network 30 µs (NCCL's
// latency `2·(ppn − 1)·intraLat + interLat`: the chain's hops up and down and one SHARP trip, which the walk
// counts hop by hop; the switch port's trip is CollNetDirect's 31 µs, engine/model/switch_ports.hpp). Its
// bandwidth in NCCL's model is the chain graph's per-channel speed, with no factor: cclab's per-channel cap.
constexpr ProtocolConstants kCollNetChainSimple = from_table(1.0, NcclAlgo::CollNetChain, kSimpleIndex);

// NCCL 2.30, src/graph/tuning.cc, ncclTunerConstantsDefaults: llMaxBws and perChMaxRingLL128Bws in GB/s,
// rows Volta, Ampere, Hopper, Blackwell (its compCapIndex), columns one node, two nodes, more. llMaxBws is
// indexed by the GPU on one node only: across nodes NCCL takes its row by host CPU, the first (Intel, and any
// non-AMD host) or the second (AMD), so the other rows' multi-node columns are never read.
constexpr const auto& kLLMaxBusBw_GBps = kNcclTunerConstants.ll_max_bw_GBps;
constexpr const auto& kLL128MaxPerChannel_GBps = kNcclTunerConstants.per_channel_max_ring_ll128_GBps;
// perChMaxTreeBws and perChMaxTreeLL128Bws, same layout.
constexpr const auto& kTreeMaxPerChannel_GBps = kNcclTunerConstants.per_channel_max_tree_GBps;
constexpr const auto& kTreeLL128MaxPerChannel_GBps = kNcclTunerConstants.per_channel_max_tree_ll128_GBps;
// perChMaxNVLSTreeBws: NVLSTree's network channels (0 on one node, where NCCL turns NVLSTree off).
constexpr const auto& kNvlsTreeMaxPerChannel_GBps = kNcclTunerConstants.per_channel_max_nvls_tree_GBps;

}  // namespace

AlgorithmFamily algorithm_family(Collective collective, std::string_view algorithm) {
  if (collective == Collective::AllReduce && algorithm == "tree") return AlgorithmFamily::Tree;
  if (algorithm == "nvls" || algorithm == "nvls_tree" || algorithm == "nvls_sharp")
    return AlgorithmFamily::Nvls;
  if (algorithm == "pat") return AlgorithmFamily::Pat;
  if (algorithm == "collnet") return AlgorithmFamily::CollNet;
  if (algorithm == "collnet_chain") return AlgorithmFamily::CollNetChain;
  if (collective == Collective::AllToAll || collective == Collective::Gather ||
      collective == Collective::Scatter || collective == Collective::SendRecv || algorithm == "hypercube")
    return AlgorithmFamily::P2p;
  return AlgorithmFamily::Ring;
}

int nccl_p2p_channels(std::uint64_t bytes, int nodes, bool all_nvlink, int channels) {
  constexpr std::uint64_t KiB = 1024;
  const std::uint64_t chunk = nodes > 1 ? 128 * KiB : all_nvlink ? 512 * KiB : 128 * KiB;
  const std::uint64_t min_part = nodes > 1 ? chunk / 2 : chunk / 8;
  const std::uint64_t max_part = nodes > 1 ? chunk : chunk * 32;
  channels = std::max(1, channels);
  if (bytes == 0) return 1;
  auto div_up = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  int n = static_cast<int>(std::min<std::uint64_t>(channels, div_up(bytes, min_part)));
  std::uint64_t part = std::max(min_part, div_up(bytes, n));
  while (part > max_part && n <= channels / 2) {
    n *= 2;
    part = div_up(bytes, n);
  }
  return n;
}

int nccl_collective_channels(AlgorithmFamily family, Protocol protocol, std::uint64_t bytes, int ranks,
                             int channels) {
  channels = std::max(1, channels);
  if (family != AlgorithmFamily::Ring && family != AlgorithmFamily::Tree) return channels;
  std::uint64_t threads = 0, per_thread = 0;
  switch (protocol) {
    case Protocol::LL:
      threads = 512, per_thread = 8 * (family == AlgorithmFamily::Ring ? std::max(1, ranks) : 1);
      break;
    case Protocol::LL128:
      threads = 640, per_thread = 8;
      break;
    case Protocol::Simple:
      threads = 512, per_thread = 64;
      break;
    case Protocol::Raw:
    case Protocol::Auto:
      return channels;
  }
  const std::uint64_t per_channel = threads * per_thread;
  return static_cast<int>(
      std::clamp<std::uint64_t>(bytes / per_channel, 1, static_cast<std::uint64_t>(channels)));
}

Protocol nccl_p2p_protocol(std::uint64_t bytes, int nodes, bool all_nvlink, int channels) {
  constexpr std::uint64_t kP2pLLThreshold = 16384;  // NCCL_P2P_LL_THRESHOLD's default
  const auto n = static_cast<std::uint64_t>(nccl_p2p_channels(bytes, nodes, all_nvlink, channels));
  return bytes <= n * kP2pLLThreshold ? Protocol::LL : Protocol::Simple;
}

double nvls_efficiency(topo::GpuArch arch) {
  constexpr double kByArch[4] = {0.0, 0.0, 0.85, 0.74};  // Volta, Ampere, Hopper, Blackwell
  return kByArch[static_cast<int>(arch)];
}

double protocol_bandwidth_cap_Bps(Protocol protocol, AlgorithmFamily family,
                                  std::optional<topo::GpuArch> arch, int nodes, int channels,
                                  std::optional<topo::HostCpu> host) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  if (!arch || protocol == Protocol::Raw || protocol == Protocol::Auto) return kNone;
  const int row = static_cast<int>(*arch), scale = nodes <= 1 ? 0 : nodes == 2 ? 1 : 2;
  // NVLS's point-to-point messages are nvls_tree's network ones: NVLSTree's ceiling per channel.
  if (family == AlgorithmFamily::Nvls)
    return nodes <= 1 ? kNone : kNvlsTreeMaxPerChannel_GBps[row][scale] * 1e9;
  if (family == AlgorithmFamily::Pat || family == AlgorithmFamily::CollNet ||
      family == AlgorithmFamily::CollNetChain)
    return kNone;  // no per-channel table
  const int ll_row = nodes <= 1 ? row : host == topo::HostCpu::Amd ? 1 : 0;
  const double ll_Bps = kLLMaxBusBw_GBps[ll_row][scale] * 1e9 / std::max(1, channels);
  if (family == AlgorithmFamily::Ring || family == AlgorithmFamily::P2p) {
    if (protocol == Protocol::LL) return ll_Bps;
    if (protocol == Protocol::LL128) return kLL128MaxPerChannel_GBps[row][scale] * 1e9;
    return kNone;
  }
  const double tree_Bps = kTreeMaxPerChannel_GBps[row][scale] * 1e9;
  if (protocol == Protocol::LL) return std::min(tree_Bps, ll_Bps);
  if (protocol == Protocol::LL128) return std::min(tree_Bps, kTreeLL128MaxPerChannel_GBps[row][scale] * 1e9);
  return tree_Bps;
}

double channel_speed_cap_Bps(std::optional<topo::GpuArch> arch, bool network) {
  // NCCL 2.30, src/graph/search.cc: speedArrayIntra[0] / speedArrayInter[0] (Volta and Ampere),
  // sm90SpeedArray*[0] (Hopper), sm100SpeedArray*[0] (Blackwell), GB/s.
  constexpr double kMaxPerChannel_GBps[4][2] = {{40.0, 48.0}, {40.0, 48.0}, {60.0, 48.0}, {90.0, 96.0}};
  if (!arch) return std::numeric_limits<double>::infinity();
  return kMaxPerChannel_GBps[static_cast<int>(*arch)][network ? 1 : 0] * 1e9;
}

namespace {
// NCCL's search keeps its speed arrays by generation: one up to Ampere, sm90's, sm100's.
std::span<const double> by_generation(topo::GpuArch arch, std::span<const double> volta_ampere,
                                      std::span<const double> hopper, std::span<const double> blackwell) {
  return arch == topo::GpuArch::Hopper ? hopper : arch == topo::GpuArch::Blackwell ? blackwell : volta_ampere;
}
}  // namespace

std::span<const double> nccl_intra_speeds_GBps(topo::GpuArch arch) {
  // NCCL 2.30, src/graph/search.cc.
  static constexpr double kVoltaAmpere[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                            9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
  static constexpr double kHopper[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
  static constexpr double kBlackwell[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                          40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
  return by_generation(arch, kVoltaAmpere, kHopper, kBlackwell);
}

std::span<const double> nccl_inter_speeds_GBps(topo::GpuArch arch) {
  // NCCL 2.30, src/graph/search.cc.
  static constexpr double kVoltaAmpere[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                            7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr double kHopper[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                       15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr double kBlackwell[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                          20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  return by_generation(arch, kVoltaAmpere, kHopper, kBlackwell);
}

std::string_view to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::Raw:
      return "raw";
    case Protocol::LL:
      return "ll";
    case Protocol::LL128:
      return "ll128";
    case Protocol::Simple:
      return "simple";
    case Protocol::Auto:
      return "auto";
  }
  return "?";
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  for (Protocol p : {Protocol::Raw, Protocol::LL, Protocol::LL128, Protocol::Simple, Protocol::Auto})
    if (text == to_string(p)) return p;
  return std::nullopt;
}

std::optional<unsigned> nccl_protocol_set(std::string_view value) {
  const NcclNameList list = parse_nccl_name_list(value);
  unsigned named = 0;
  for (const std::string& one : list.names) {
    const auto p = parse_protocol(one);
    if (!p || protocol_bit(*p) == 0) return std::nullopt;
    named |= protocol_bit(*p);
  }
  const unsigned set = list.excluding ? kAllNcclProtocolBits & ~named : named;
  if (set == 0) return std::nullopt;
  return set;
}

RouteClass route_class(const topo::Route& route, const topo::Topology& topology) {
  RouteClass cls = RouteClass::Local;
  for (const topo::Hop& h : route.hops) {
    RouteClass hop = RouteClass::NvLink;
    switch (topology.link(h.link).kind) {
      case topo::LinkKind::NvLink:
      case topo::LinkKind::NvSwitch:
        hop = RouteClass::NvLink;
        break;
      // NCCL's tuner has three hardware latency rows (NVLink, PCI, NET); a path through the CPU sockets
      // (its SYS) takes the PCI row.
      case topo::LinkKind::Pcie:
      case topo::LinkKind::Socket:
        hop = RouteClass::Pcie;
        break;
      case topo::LinkKind::InfiniBand:
      case topo::LinkKind::Ethernet:
      case topo::LinkKind::Tcp:
      case topo::LinkKind::Efa:
        hop = RouteClass::Network;
        break;
    }
    cls = std::max(cls, hop);
  }
  // A NIC hangs off PCIe: a route through the network crosses PCIe too, and counts as network.
  return cls;
}

const ProtocolConstants& protocol_constants(Protocol protocol, AlgorithmFamily family) {
  if (!family_runs(family, Protocol::LL) && protocol != Protocol::Auto) {
    if (protocol == Protocol::Raw) return kRaw;
    const auto [constants, name, kernels] =
        family == AlgorithmFamily::Nvls  ? std::tuple(&kNvlsSimple, "nvls", "NVLS")
        : family == AlgorithmFamily::Pat ? std::tuple(&kPatSimple, "pat", "PAT")
        : family == AlgorithmFamily::CollNetChain
            ? std::tuple(&kCollNetChainSimple, "collnet_chain", "CollNetChain")
            : std::tuple(&kCollNetSimple, "collnet", "CollNet");
    if (protocol == Protocol::Simple) return *constants;
    throw ConfigError(fmt::format("{} runs under simple only, not {}: NCCL has no LL or LL128 {} kernels",
                                  name, to_string(protocol), kernels));
  }
  if (family == AlgorithmFamily::P2p && protocol == Protocol::LL128) {
    throw ConfigError(
        "point-to-point transfers run under ll or simple, not ll128: NCCL's send/receive path has no LL128");
  }
  const bool tree = family == AlgorithmFamily::Tree;
  switch (protocol) {
    case Protocol::Raw:
      return kRaw;
    case Protocol::LL:
      return tree ? kTreeLL : kLL;
    case Protocol::LL128:
      return tree ? kTreeLL128 : kLL128;
    case Protocol::Simple:
      return tree ? kTreeSimple : kSimple;
    case Protocol::Auto:
      break;
  }
  throw ConfigError("protocol 'auto' has no constants of its own: it chooses among ll, ll128 and simple");
}

MessageCost message_cost(Protocol protocol, AlgorithmFamily family, RouteClass cls, double route_latency_s,
                         double route_bandwidth_Bps) {
  const ProtocolConstants& k = protocol_constants(protocol, family);
  MessageCost m{route_latency_s, route_bandwidth_Bps * k.wire_efficiency};
  if (cls != RouteClass::Local) {
    m.latency_s = std::max(route_latency_s, k.step_latency_s[static_cast<int>(cls) - 1]);
  }
  return m;
}

std::string_view protocol_unavailable(Protocol protocol, bool crosses_pcie) {
  if (protocol == Protocol::LL128 && crosses_pcie)
    return "LL128 needs NVLink between the GPUs of a node (NCCL enables it only there)";
  return {};
}

}  // namespace cclab
