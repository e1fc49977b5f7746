#include "engine/model/connections.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>
#include <vector>

#include "common/error.hpp"

namespace cclab {

ConnectionCosts::ConnectionCosts(const topo::Topology& topology, int lanes_per_channel)
    : topology_(topology), lanes_(std::max(1, lanes_per_channel)) {}

void ConnectionCosts::add(int from_rank, int to_rank, int ir_channel) {
  connections_.try_emplace(key(from_rank, to_rank, ir_channel));
}

void ConnectionCosts::finish(Protocol protocol) {
  // One route per rank pair, whatever the channels on it.
  std::unordered_map<std::uint64_t, topo::Route> routes;
  auto pair_key = [](std::uint64_t k) { return k >> 16; };
  for (const auto& [k, conn] : connections_) {
    if (routes.count(pair_key(k))) continue;
    const int a = static_cast<int>(k >> 40), b = static_cast<int>((k >> 16) & 0xffffff);
    routes.emplace(pair_key(k), topology_.route_between_ranks(a, b));
  }
  std::unordered_map<std::size_t, std::unordered_set<int>> channels_on_link;
  for (const auto& [k, conn] : connections_) {
    const int channel = static_cast<int>(k & 0xffff);
    for (const topo::Hop& h : routes.at(pair_key(k)).hops)
      channels_on_link[h.directed_id()].insert(channel / lanes_);
  }
  for (auto& [k, e] : connections_) {
    const topo::Route& route = routes.at(pair_key(k));
    e.route_latency_s = route.latency_s;
    e.route_bandwidth_Bps = std::numeric_limits<double>::infinity();
    for (const topo::Hop& h : route.hops) {
      const double share = static_cast<double>(channels_on_link[h.directed_id()].size());
      e.route_bandwidth_Bps =
          std::min(e.route_bandwidth_Bps, topology_.effective_bandwidth_Bps(h.link) / share);
    }
    e.cls = route_class(route, topology_);
    crosses_pcie_ = crosses_pcie_ || e.cls == RouteClass::Pcie;
  }
  use_protocol(protocol);
}

void ConnectionCosts::use_protocol(Protocol protocol) {
  protocol_ = protocol;
  for (auto& [k, e] : connections_) {
    const MessageCost m = message_cost(protocol, e.cls, e.route_latency_s, e.route_bandwidth_Bps);
    e.cost = {m.latency_s, m.bandwidth_Bps};
  }
}

const ConnectionCost& ConnectionCosts::at(int from_rank, int to_rank, int ir_channel) const {
  const auto it = connections_.find(key(from_rank, to_rank, ir_channel));
  CCLAB_ENFORCE(it != connections_.end(), "no connection {} -> {} on channel {}", from_rank, to_rank,
                ir_channel);
  return it->second.cost;
}

}  // namespace cclab
