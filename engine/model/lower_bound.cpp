#include "engine/model/lower_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/ir/halving_doubling_layout.hpp"
#include "engine/model/switch_ports.hpp"

namespace cclab {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

MessageBounds::MessageBounds(const topo::Topology& topology, const CostParams& params)
    : topology_(topology),
      params_(params),
      protocols_(protocols_to_cost(params.protocol, false, AlgorithmFamily::Ring, params.auto_protocols)) {
  intra_ = {kInf, 0};
  inter_ = {kInf, 0};
  for (std::size_t id = 0; id < topology.num_links(); ++id) {
    const topo::Link& l = topology.link(id);
    const double latency = topology.effective_latency_s(id), bandwidth = topology.effective_bandwidth_Bps(id);
    intra_ = {std::min(intra_.latency_s, latency), std::max(intra_.bandwidth_Bps, bandwidth)};
    if (topo::is_network(l.kind)) {
      inter_ = {std::min(inter_.latency_s, latency), std::max(inter_.bandwidth_Bps, bandwidth)};
    } else if (topology.vertex(l.a).node != topology.vertex(l.b).node) {
      network_between_nodes_ = false;  // e.g. an NVLink domain spanning nodes
    }
  }
  if (!network_between_nodes_ || inter_.bandwidth_Bps == 0) inter_ = intra_;
}

double MessageBounds::message_s(int a, int b, double bytes, Protocol protocol) const {
  if (a == b) return 0;
  const bool same_node = topology_.node_of_rank(a) == topology_.node_of_rank(b);
  const bool network = !same_node && network_between_nodes_;
  const Reach& reach = network ? inter_ : intra_;
  const ProtocolConstants& k = protocol_constants(protocol);
  // Route classes order their step latencies (NVLink <= PCIe <= network), so the least class bounds them.
  const RouteClass least = network ? RouteClass::Network : RouteClass::NvLink;
  const double latency = std::max(reach.latency_s, k.step_latency_s[static_cast<int>(least) - 1]);
  return latency + bytes / (reach.bandwidth_Bps * k.wire_efficiency);
}

namespace {

// A ring pass's bound for every member (see the header).
double ring_lane_bound_s(const RingPass& ring, std::span<const int> global, const MessageBounds& b,
                         Protocol protocol, double elem_bytes) {
  const int P = ring.members(), C = ring.channels(), K = ring.rounds();
  if (P < 2) return 0;
  const int halves = (ring.reduce_scatter ? 1 : 0) + (ring.allgather ? 1 : 0);
  // Chunks of the partition (owner's block, channel slice, round) hold at least ⌊count / (P·C·K)⌋ elements.
  const double chunk_bytes =
      static_cast<double>(ring.count / (static_cast<std::uint64_t>(P) * C * std::max(K, 1))) * elem_bytes;
  const double connection_bytes = chunk_bytes * halves * (P - 1) * std::max(K, 1);
  double bound = 0;
  for (int c = 0; c < C; ++c) {
    const auto& order = ring.rings[c];
    double sum = 0, largest = 0, least_connection = kInf;
    for (int i = 0; i < P; ++i) {
      const int from = global[order[i]], to = global[order[(i + 1) % P]];
      const double hop = b.message_s(from, to, chunk_bytes, protocol);
      sum += hop;
      largest = std::max(largest, hop);
      least_connection = std::min(least_connection, b.message_s(from, to, connection_bytes, protocol));
    }
    // The last block a member receives travelled every hop but one in the reduce-scatter and every hop but
    // one in the allgather; in one half alone, every hop but one.
    const double chain = halves * (sum - largest);
    bound = std::max({bound, chain, least_connection});
  }
  return bound;
}

double schedule_bound_s(const CompactSchedule& s, const MessageBounds& b, Protocol protocol) {
  const double elem_bytes = static_cast<double>(dtype_size_bytes(s.spec.dtype));
  std::vector<double> ready(
      static_cast<std::size_t>(s.world_size()),
      protocol_constants(protocol, algorithm_family(s.spec.collective, s.algorithm)).launch_s);
  for (const Phase& phase : s.phases()) {
    for (const Lane& lane : phase.lanes) {
      // Ring lanes only; the other passes bound at 0.
      const auto* ring = std::get_if<RingPass>(lane.pass.get());
      if (!ring) continue;
      double earliest = kInf;
      for (int r : lane.ranks)
        earliest = std::min(earliest, ready[r]);
      const double end = earliest + ring_lane_bound_s(*ring, lane.ranks, b, protocol, elem_bytes);
      for (int r : lane.ranks)
        ready[r] = std::max(ready[r], end);
    }
  }
  return ready.empty() ? 0.0 : *std::max_element(ready.begin(), ready.end());
}

}  // namespace

double compact_lower_bound_s(const CompactSchedule& schedule, const MessageBounds& bounds) {
  const AlgorithmFamily family = algorithm_family(schedule.spec.collective, schedule.algorithm);
  double least = kInf;
  for (Protocol p : bounds.protocols())
    if (family_runs(family, p)) least = std::min(least, schedule_bound_s(schedule, bounds, p));
  // No protocol it runs under: no bound (costing it says why).
  return std::isinf(least) ? 0.0 : least;
}

double halving_doubling_lower_bound_s(const CollectiveSpec& spec, const MessageBounds& bounds) {
  const HalvingDoublingLayout layout(spec.world_size);
  const int steps = layout.log2();
  const double elem_bytes = static_cast<double>(dtype_size_bytes(spec.dtype));
  const double reduce_Bps = bounds.params().reduce_Bps;
  double least = kInf;
  for (Protocol p : bounds.protocols()) {
    double t = protocol_constants(p).launch_s;
    // Halving step i (mask pow2 / 2^(i+1)) moves half of what is left, at least ⌊count / 2^(i+1)⌋ elements,
    // reduced on arrival; doubling returns the same sizes in reverse order over the same partners.
    for (int i = 0; i < steps; ++i) {
      const int mask = layout.pow2 >> (i + 1);
      const double bytes = static_cast<double>(spec.count >> (i + 1)) * elem_bytes;
      double cheapest = kInf;
      for (int v = 0; v < layout.pow2; ++v)
        cheapest =
            std::min(cheapest, bounds.message_s(layout.rank_of(v ^ mask), layout.rank_of(v), bytes, p));
      t += 2 * cheapest + (reduce_Bps > 0 ? bytes / reduce_Bps : 0.0);
    }
    least = std::min(least, t);
  }
  return least;
}

double nvls_tree_lower_bound_s(const CollectiveSpec& spec, const MessageBounds& bounds) {
  const double gpus_per_node =
      static_cast<double>(spec.world_size) / std::max<std::size_t>(1, bounds.topology().num_nodes());
  const double port_bytes = static_cast<double>(spec.count) *
                            static_cast<double>(dtype_size_bytes(spec.dtype)) * (1 + 1 / gpus_per_node);
  // The cheapest launch among the protocols NVLS runs under (Simple; Raw has none).
  double launch_s = kInf;
  for (Protocol p : bounds.protocols())
    if (family_runs(AlgorithmFamily::Nvls, p))
      launch_s = std::min(launch_s, protocol_constants(p, AlgorithmFamily::Nvls).launch_s);
  return (std::isinf(launch_s) ? 0.0 : launch_s) + port_bytes / bounds.fastest_link_Bps();
}

double collnet_lower_bound_s(const CollectiveSpec& spec, const MessageBounds& bounds) {
  const double g =
      static_cast<double>(spec.world_size) / std::max<std::size_t>(1, bounds.topology().num_nodes());
  const double bytes = static_cast<double>(spec.count) * static_cast<double>(dtype_size_bytes(spec.dtype));
  return kSharpTripLatency_s + std::max(2 * (g - 1) / g * bytes, bytes / g) / bounds.fastest_link_Bps();
}

}  // namespace cclab
