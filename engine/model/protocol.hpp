// NCCL's wire protocols as the α-β model and the simulator see them. A protocol changes what one message of a
// schedule costs, not the schedule: how much of a link's bandwidth carries payload, the fixed latency of one
// step (a message between two peers, flags and fences included), and a fixed cost per collective (kernel
// launch and set-up). `raw` is no protocol at all — a message costs its route's latency and the link models'
// bandwidth, which is what cclab's own transports (MPI, threads) pay and what the textbook formulas assume.
//
// Constants (engine/model/protocol.cpp has each with its source):
//   - wire efficiency: LL puts 4 bytes of flag beside every 4 bytes of data (8-byte stores), so half the
//     bytes on the wire are payload; LL128 puts an 8-byte flag in every 128-byte line (120/128, of which
//     NCCL's tuning model counts 0.92); Simple sends the payload alone and synchronises with fences, so 1.
//   - step latency per route class (NVLink, PCIe, network) and launch cost: NCCL 2.30's tuning model
//     (src/graph/tuning.cc: hwLatencies and baseLatencies), which has a row per algorithm: NCCL's tree
//     kernels poll and forward differently from its ring kernels, so a tree schedule is priced with the tree
//     row and a tree's own bandwidth factors (AlgorithmFamily).
// A message on a route of class k costs max(route latency, step latency of k): NCCL's step latencies are
// measured end to end on typical NVLink, PCIe and InfiniBand hardware, wire included; a route that is slower
// than that (more switch hops, a degraded link) keeps its own latency.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include "engine/ir/collective.hpp"
#include "topology/topology.hpp"

namespace cclab {

enum class Protocol { Raw, LL, LL128, Simple, Auto };
inline constexpr std::string_view kProtocolNames = "auto, ll, ll128, simple, raw";
// The protocols `auto` chooses among, in NCCL's order.
inline constexpr std::array<Protocol, 3> kNcclProtocols = {Protocol::LL, Protocol::LL128, Protocol::Simple};
// A set of NCCL protocols as bits (CostParams::auto_protocols): bit 0 LL, 1 LL128, 2 Simple.
inline constexpr unsigned protocol_bit(Protocol p) {
  return p == Protocol::LL ? 1u : p == Protocol::LL128 ? 2u : p == Protocol::Simple ? 4u : 0u;
}
inline constexpr unsigned kAllNcclProtocolBits = 7u;

// Which of NCCL's kernel families a schedule's messages run in: Tree for the double binary tree allreduce
// (the only collective NCCL runs as a tree), Nvls for in-switch reduction (NVLink SHARP; Simple only: NCCL
// has no LL or LL128 NVLS kernels), Pat for PAT allgather (Simple only), Ring for everything else — NCCL's
// rings, and the algorithms it lacks (halving-doubling, hierarchical, chains), whose point-to-point steps are
// ring-like sends; CollNet for in-network reduction with direct messages inside nodes (CollNetDirect), and
// CollNetChain with a chain inside (SHARP; both Simple only); P2p for what NCCL runs as grouped ncclSend/
// ncclRecv (alltoall, gather, scatter, sendrecv, hypercube_perf's allgather): ring-like messages on ring-like
// channels, but LL or Simple only, since NCCL's p2p path picks one of those two per transfer (LL up to
// NCCL_P2P_LL_THRESHOLD, 16 KiB, per channel; src/enqueue.cc) and has no LL128.
enum class AlgorithmFamily { Ring, Tree, Nvls, Pat, CollNet, CollNetChain, P2p };
AlgorithmFamily algorithm_family(Collective collective, std::string_view algorithm);

// NCCL's channels and protocol for one point-to-point transfer of `bytes` (NCCL 2.30, src/enqueue.cc,
// addP2pToPlan), which it decides per transfer rather than by a cost model: the transfer is cut in parts of
// at least minPart and at most maxPart bytes, one per channel, from p2pChunkSize (NCCL_P2P_NET_CHUNKSIZE 128
// KiB across nodes, NCCL_P2P_NVL_CHUNKSIZE 512 KiB where a node's GPUs are all on NVLink,
// NCCL_P2P_PCI_CHUNKSIZE 128 KiB otherwise; src/init.cc): minPart is half of it across nodes and an eighth
// inside one, maxPart all of it across nodes and 32 times it inside one. It starts on min(channels, bytes /
// minPart) channels and doubles them while a part exceeds maxPart and `channels` (p2pnChannelsPerPeer; here
// the channels the schedule gives the peer) allows; then LL if the transfer is at most NCCL_P2P_LL_THRESHOLD
// (16 KiB) per channel, else Simple. Across nodes and on NVLink that is LL up to 16 KiB a transfer; on a PCIe
// node, up to 16 KiB per channel. (GB200's doubled network chunk on Arm hosts moves the channel count, not
// this threshold.)
int nccl_p2p_channels(std::uint64_t bytes, int nodes, bool all_nvlink, int channels);
Protocol nccl_p2p_protocol(std::uint64_t bytes, int nodes, bool all_nvlink, int channels);

// NCCL's channels for one ring or tree collective of `bytes` (nccl-tests' size: the whole buffer) over
// `ranks` ranks on a communicator of `channels` (NCCL 2.30, src/enqueue.cc, topoGetAlgoInfo): it drops
// channels while the message is under nc · nt · threshold bytes, nt the kernel's threads (LL 512, LL128 640,
// Simple 512; NCCL_*_MAX_NTHREADS) and threshold its bytes per thread (src/graph/tuning.cc, threadThresholds:
// LL 8 — a ring's times its ranks —, LL128 8, Simple 64). So a ring under LL takes one channel per 4 KiB ·
// ranks (32 KiB on 8 GPUs), LL128 one per 5 KiB, Simple one per 32 KiB; at least one, at most `channels`.
// Other families (NVLS, CollNet, PAT, point to point: their own rules), Raw and Auto keep `channels`.
int nccl_collective_channels(AlgorithmFamily family, Protocol protocol, std::uint64_t bytes, int ranks,
                             int channels);

// Whether NCCL has kernels of `family` for `protocol` (Nvls, Pat and CollNet: Simple only; P2p: no LL128;
// Raw, cclab's own, runs everything).
inline bool family_runs(AlgorithmFamily family, Protocol protocol) {
  const bool simple_only = family == AlgorithmFamily::Nvls || family == AlgorithmFamily::Pat ||
                           family == AlgorithmFamily::CollNet || family == AlgorithmFamily::CollNetChain;
  if (family == AlgorithmFamily::P2p) return protocol != Protocol::LL128;
  return !simple_only || protocol == Protocol::Simple || protocol == Protocol::Raw;
}

// The fraction of a GPU's NVSwitch port bandwidth that in-switch reduction and multicast sustain: NCCL 2.30's
// nvlsEfficiency (src/graph/tuning.cc): Volta and Ampere 0 (no NVLS), Hopper 0.85, Blackwell 0.74.
double nvls_efficiency(topo::GpuArch arch);

std::string_view to_string(Protocol protocol);
std::optional<Protocol> parse_protocol(std::string_view text);  // nullopt when unknown
// NCCL_PROTO's value as NCCL reads it (one name, a comma-separated list, or '^' and the names to leave out;
// any case) as protocol bits (protocol_bit); nullopt for a name that is not LL, LL128 or Simple, or an empty
// set.
std::optional<unsigned> nccl_protocol_set(std::string_view value);

// What a route crosses, for the protocol's step latency: the slowest class of its links.
enum class RouteClass { Local, NvLink, Pcie, Network };
RouteClass route_class(const topo::Route& route, const topo::Topology& topology);

struct ProtocolConstants {
  double wire_efficiency = 1.0;          // payload bytes / bytes on the wire
  double launch_s = 0;                   // once per collective
  double step_latency_s[3] = {0, 0, 0};  // per message, by RouteClass NvLink, Pcie, Network
};
// The constants of a concrete protocol in a family (Raw: efficiency 1, no latencies). Auto has none: throws.
const ProtocolConstants& protocol_constants(Protocol protocol,
                                            AlgorithmFamily family = AlgorithmFamily::Ring);

// One message's latency and payload bandwidth on a connection whose route has `route_latency_s` and
// `route_bandwidth_Bps` (its share of the bottleneck), under a concrete protocol.
struct MessageCost {
  double latency_s = 0;
  double bandwidth_Bps = 0;
};
MessageCost message_cost(Protocol protocol, AlgorithmFamily family, RouteClass cls, double route_latency_s,
                         double route_bandwidth_Bps);

// NCCL's ceilings on throughput per GPU architecture (what the GPU's stores and flag polling sustain,
// measured by NVIDIA; tuning.cc: llMaxBws, the bus bandwidth of a whole LL ring or tree, and per channel
// perChMaxRingLL128Bws for rings, perChMaxTreeBws (every protocol) and perChMaxTreeLL128Bws for trees), by
// scale (one node, two, more). As a cap on one connection of a schedule with `channels` network channels over
// `nodes` nodes: LL's ceiling split over the channels, the others per channel; +inf for ring Simple, Raw and
// where the architecture is unknown. Across nodes LL's ceiling is NCCL's row for the host CPU (`host`: AMD's,
// or for any other or unknown host Intel's), not the GPU's.
double protocol_bandwidth_cap_Bps(Protocol protocol, AlgorithmFamily family,
                                  std::optional<topo::GpuArch> arch, int nodes, int channels,
                                  std::optional<topo::HostCpu> host = std::nullopt);

// The most one channel moves on the wire: a channel is one thread block, which cannot drive a whole NVSwitch
// port. NCCL's ring and tree search never assumes more per channel (src/graph/search.cc: the first entries of
// speedArrayIntra / speedArrayInter, 40 / 48 GB/s up to Ampere, sm90's 60 / 48 for Hopper, sm100's 90 / 96
// for Blackwell), and its tuning model's bus bandwidth is channels times that times the protocol's factor.
// Inside a node (`network` false) or across it; +inf where the architecture is unknown.
double channel_speed_cap_Bps(std::optional<topo::GpuArch> arch, bool network);

// NCCL's ring search inside a node (src/graph/search.cc: speedArrayIntra up to Ampere, sm90SpeedArrayIntra,
// sm100SpeedArrayIntra): the per-channel speeds it tries, highest first, in GB/s.
std::span<const double> nccl_intra_speeds_GBps(topo::GpuArch arch);
// And across nodes (speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter), highest first, in GB/s.
std::span<const double> nccl_inter_speeds_GBps(topo::GpuArch arch);
// False for Raw: a message leaves once the receiver has posted its receive and the connection's previous
// message has arrived (store-and-forward, the textbook pipeline (P-1+K-1)·(α + S/(K·B))). True under NCCL's
// protocols, whose receivers keep NCCL_STEPS = 8 buffers posted ahead: a message leaves when the sender is
// ready and the wire is free (the previous message has been put on it), and the receive completes when the
// data has arrived and the receiver has reached the op — so a step's latency is paid once per step of the
// algorithm, not once per chunk (NCCL's own model: latency × steps + bytes / bandwidth). The 8-slot limit
// itself is not modelled by the α-β walk (a sender never runs that far ahead of its own receives there).
inline bool is_pipelined(Protocol protocol) {
  return protocol != Protocol::Raw;
}

// Why a protocol does not apply to a set of route classes, or empty: NCCL enables LL128 only where the GPUs
// of a node talk over NVLink (tuning.cc: LL128 is off over PCIe paths, where its 128-byte stores are not
// guaranteed to arrive whole).
std::string_view protocol_unavailable(Protocol protocol, bool crosses_pcie);

}  // namespace cclab
