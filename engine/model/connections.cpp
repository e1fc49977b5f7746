#include "engine/model/connections.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <thread>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/model/switch_ports.hpp"

namespace cclab {

ConnectionCosts::ConnectionCosts(const topo::Topology& topology, int lanes_per_channel,
                                 AlgorithmFamily family, std::uint64_t collective_bytes, int ranks)
    : topology_(topology),
      lanes_(std::max(1, lanes_per_channel)),
      family_(family),
      collective_bytes_(collective_bytes),
      ranks_(ranks) {}

void ConnectionCosts::add(int from_rank, int to_rank, int ir_channel, std::uint64_t bytes) {
  connections_[connection_key(from_rank, to_rank, ir_channel)].bytes += bytes;
}

void ConnectionCosts::add_switch(int rank, int ir_channel, std::uint64_t up_bytes, std::uint64_t down_bytes,
                                 bool in_network) {
  const auto [it, fresh] = switch_ports_.try_emplace(port_key(rank, ir_channel));
  SwitchEntry& e = it->second;
  if (fresh) e.in_network = in_network;
  if (e.in_network != in_network)
    throw ConfigError(
        fmt::format("rank {} reduces inside its node and in the network on one IR channel ({}): "
                    "each kind needs channels of its own",
                    rank, ir_channel));
  e.up_bytes += up_bytes;
  e.down_bytes += down_bytes;
}

std::vector<topo::Route> ConnectionCosts::route_all(const std::vector<std::uint64_t>& pairs) const {
  std::vector<topo::Route> routes(pairs.size());
  auto route = [&](std::size_t i) {
    routes[i] = topology_.route_between_ranks(static_cast<int>(pairs[i] >> 24),
                                              static_cast<int>(pairs[i] & 0xffffff));
  };
  // Routing is most of what costing a large schedule takes (a 16,384-GPU tree has 262 k rank pairs); the
  // searches are independent (per-thread scratch, a locked cache), so they spread over the cores.
  constexpr std::size_t kParallelPairs = 4096;
  const std::size_t workers = std::min<std::size_t>(8, std::thread::hardware_concurrency());
  if (pairs.size() < kParallelPairs || workers < 2) {
    for (std::size_t i = 0; i < pairs.size(); ++i)
      route(i);
    return routes;
  }
  // A pair with no route left (failed links) throws: the error of the first such pair, as in one thread.
  std::vector<std::exception_ptr> failed(workers);
  std::vector<std::size_t> failed_at(workers, pairs.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        for (std::size_t i = w; i < pairs.size(); i += workers) {
          try {
            route(i);
          } catch (...) {
            failed[w] = std::current_exception();
            failed_at[w] = i;
            return;
          }
        }
      });
    }
  }
  const auto first = std::min_element(failed_at.begin(), failed_at.end()) - failed_at.begin();
  if (failed[first]) std::rethrow_exception(failed[first]);
  return routes;
}

void ConnectionCosts::finish(Protocol protocol) {
  // One route per rank pair, whatever the channels on it; connections grouped by network channel, so that
  // counting the channels on each link is one stamp per (link, channel) instead of a set per link.
  std::unordered_map<std::uint64_t, std::uint32_t> route_of_pair;
  struct Pending {
    int channel;
    std::uint32_t route;
    Entry* entry;
  };
  std::vector<Pending> pending;
  pending.reserve(connections_.size());
  std::vector<std::uint64_t> pairs;
  for (auto& [k, e] : connections_) {
    const std::uint64_t pair = k >> 16;
    auto [it, fresh] = route_of_pair.try_emplace(pair, static_cast<std::uint32_t>(pairs.size()));
    if (fresh) pairs.push_back(pair);
    pending.push_back({static_cast<int>(k & 0xffff) / lanes_, it->second, &e});
  }
  const std::vector<topo::Route> routes = route_all(pairs);
  std::sort(pending.begin(), pending.end(),
            [](const Pending& x, const Pending& y) { return x.channel < y.channel; });
  const std::size_t directed_links = 2 * topology_.num_links();
  std::vector<std::uint32_t> channels_on_link(directed_links, 0);
  std::vector<int> last_channel(directed_links, -1);
  std::vector<std::uint64_t> bytes_on_link(directed_links, 0);
  for (const Pending& p : pending) {
    for (const topo::Hop& h : routes[p.route].hops) {
      bytes_on_link[h.directed_id()] += p.entry->bytes;
      if (last_channel[h.directed_id()] == p.channel) continue;
      last_channel[h.directed_id()] = p.channel;
      ++channels_on_link[h.directed_id()];
    }
  }
  // Switch ports: each (rank, network channel) is a channel on both directions of the rank's switch port,
  // whose bytes take their time at the switch's efficiency.
  std::unordered_map<std::uint64_t, ReductionPort> port_of;  // by switch-port key
  // A network channel's switch streams on IR channels of their own (nvls_tree's reduce and multicast, as
  // NCCL's separate warps) are one channel on the port, whose share they split per direction by the bytes
  // each sends that way: each stream's round then takes as long as the port needs for the channel's round.
  struct StreamBytes {
    std::uint64_t up = 0, down = 0;
    bool counted = false;  // the channel is on the port's links already
  };
  std::unordered_map<std::uint64_t, StreamBytes> channel_bytes;  // by stream_key
  std::vector<double> switch_wire_s(directed_links, 0.0);
  for (auto& [k, e] : switch_ports_) {
    const ReductionPort& reduction =
        port_of.emplace(k, reduction_port(topology_, static_cast<int>(k >> 16), e.in_network)).first->second;
    const topo::SwitchPort& port = reduction.port;
    const double bandwidth = topology_.effective_bandwidth_Bps(port.link) * reduction.efficiency;
    switch_wire_s[port.up.directed_id()] += e.up_bytes / bandwidth;
    switch_wire_s[port.down.directed_id()] += e.down_bytes / bandwidth;
    StreamBytes& bytes = channel_bytes[stream_key(k, e.in_network)];
    bytes.up += e.up_bytes;
    bytes.down += e.down_bytes;
    if (std::exchange(bytes.counted, true)) continue;
    ++channels_on_link[port.up.directed_id()];
    ++channels_on_link[port.down.directed_id()];
  }
  busiest_link_wire_s_ = 0;
  for (std::size_t id = 0; id < topology_.num_links(); ++id) {
    const double bandwidth = topology_.effective_bandwidth_Bps(id);
    for (std::size_t d = 2 * id; d < 2 * id + 2; ++d)
      if (bytes_on_link[d] > 0 || switch_wire_s[d] > 0)
        busiest_link_wire_s_ = std::max(busiest_link_wire_s_,
                                        static_cast<double>(bytes_on_link[d]) / bandwidth + switch_wire_s[d]);
  }
  // A neighbour job's streams split the links they cross like channels of our own (topology.hpp).
  for (const topo::Topology::BackgroundFlow& f : topology_.background())
    for (const topo::Hop& h : topology_.route(f.from, f.to).hops)
      channels_on_link[h.directed_id()] += static_cast<std::uint32_t>(f.streams);
  // NCCL's protocol ceilings depend on how many nodes and network channels the schedule spans.
  channels_ = pending.empty() ? 0 : pending.back().channel + 1;
  std::unordered_set<int> nodes;
  for (const std::uint64_t pair : pairs) {
    nodes.insert(topology_.node_of_rank(static_cast<int>(pair >> 24)));
    nodes.insert(topology_.node_of_rank(static_cast<int>(pair & 0xffffff)));
  }
  nodes_ = static_cast<int>(nodes.size());
  for (const Pending& p : pending) {
    const topo::Route& route = routes[p.route];
    Entry& e = *p.entry;
    e.route_latency_s = route.latency_s;
    e.route_bandwidth_Bps = std::numeric_limits<double>::infinity();
    for (const topo::Hop& h : route.hops) {
      const double share = static_cast<double>(channels_on_link[h.directed_id()]);
      e.route_bandwidth_Bps =
          std::min(e.route_bandwidth_Bps, topology_.effective_bandwidth_Bps(h.link) / share);
    }
    e.cls = route_class(route, topology_);
    crosses_pcie_ = crosses_pcie_ || e.cls == RouteClass::Pcie;
  }
  for (auto& [k, e] : switch_ports_) {
    const ReductionPort& reduction = port_of.at(k);
    const topo::SwitchPort& port = reduction.port;
    const double bandwidth = topology_.effective_bandwidth_Bps(port.link) * reduction.efficiency;
    const StreamBytes& channel = channel_bytes.at(stream_key(k, e.in_network));
    auto part = [](std::uint64_t mine, std::uint64_t all) {
      return all == 0 ? 1.0 : static_cast<double>(mine) / static_cast<double>(all);
    };
    e.port = {reduction.latency_s,
              bandwidth / channels_on_link[port.up.directed_id()] * part(e.up_bytes, channel.up),
              bandwidth / channels_on_link[port.down.directed_id()] * part(e.down_bytes, channel.down)};
  }
  use_protocol(protocol);
}

ConnectionCosts::Transfer ConnectionCosts::largest_transfer() const {
  // Connections by rank pair and network channel, sorted, then summed pair by pair: a flat array (24 bytes a
  // connection) where a map of per-pair sets would take several times that on an alltoall's P² pairs.
  struct Item {
    std::uint64_t pair;
    int channel;
    std::uint64_t bytes;
  };
  std::vector<Item> items;
  items.reserve(connections_.size());
  for (const auto& [k, e] : connections_) {
    const std::uint64_t pair = k >> 16;
    if ((pair >> 24) != (pair & 0xffffff))
      items.push_back({pair, static_cast<int>(k & 0xffff) / lanes_, e.bytes});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::tie(a.pair, a.channel) < std::tie(b.pair, b.channel);
  });
  Transfer out;
  for (std::size_t i = 0; i < items.size();) {
    Transfer pair;
    std::size_t j = i;
    for (; j < items.size() && items[j].pair == items[i].pair; ++j) {
      pair.bytes += items[j].bytes;
      if (j == i || items[j].channel != items[j - 1].channel) ++pair.channels;
    }
    if (pair.bytes > out.bytes || (pair.bytes == out.bytes && pair.channels > out.channels)) out = pair;
    i = j;
  }
  return out;
}

std::uint64_t ConnectionCosts::stream_key(std::uint64_t port_key, bool in_network) const {
  const int rank = static_cast<int>(port_key >> 16), ir_channel = static_cast<int>(port_key & 0xffff);
  return ConnectionCosts::port_key(rank, 2 * (ir_channel / lanes_) + (in_network ? 1 : 0));
}

const ConnectionCosts::SwitchPort& ConnectionCosts::switch_port(int rank, int ir_channel) const {
  const auto it = switch_ports_.find(port_key(rank, ir_channel));
  CCLAB_ENFORCE(it != switch_ports_.end(), "no switch port of rank {} on channel {}", rank, ir_channel);
  return it->second.port;
}

void ConnectionCosts::use_protocol(Protocol protocol) {
  protocol_ = protocol;
  const double cap = bandwidth_cap_Bps();
  for (auto& [k, e] : connections_) {
    const double route_Bps = std::min(e.route_bandwidth_Bps, block_cap_Bps(e.cls));
    const MessageCost m = message_cost(protocol, family_, e.cls, e.route_latency_s, route_Bps);
    e.cost = {m.latency_s, std::min(m.bandwidth_Bps, cap), 0};
    if (e.route_wire_Bps < 0) {
      e.cost.wire_Bps = e.cost.bandwidth_Bps;
    } else {
      const double wire_route_Bps = std::min(e.route_wire_Bps, block_cap_Bps(e.cls));
      e.cost.wire_Bps = std::min(
          message_cost(protocol, family_, e.cls, e.route_latency_s, wire_route_Bps).bandwidth_Bps, cap);
    }
  }
}

void ConnectionCosts::reshare(const std::function<RouteShare(int, int, int, double)>& share) {
  for (auto& [k, e] : connections_) {
    const RouteShare r = share(static_cast<int>(k >> 40), static_cast<int>((k >> 16) & 0xffffff),
                               static_cast<int>(k & 0xffff), e.route_bandwidth_Bps);
    e.route_bandwidth_Bps = r.pace_Bps;
    e.route_wire_Bps = r.wire_Bps;
  }
  use_protocol(protocol_);
}

double ConnectionCosts::block_cap_Bps(RouteClass cls) const {
  // Under NCCL's protocols a ring, tree or CollNet chain channel is one thread block: its wire rate is at
  // most what NCCL's search assumes per channel, of which each protocol then carries its payload share
  // (NCCL's bandwidth is channels x per-channel speed x the protocol's factor). Raw is cclab's own transport
  // on hosts.
  const bool per_block = protocol_ != Protocol::Raw &&
                         (family_ == AlgorithmFamily::Ring || family_ == AlgorithmFamily::Tree ||
                          family_ == AlgorithmFamily::CollNetChain || family_ == AlgorithmFamily::P2p);
  if (!per_block || cls == RouteClass::Local) return std::numeric_limits<double>::infinity();
  const double block_Bps = channel_speed_cap_Bps(topology_.gpu_arch(), cls == RouteClass::Network);
  if (collective_bytes_ == 0 || channels_ < 1) return block_Bps;
  const int blocks = nccl_collective_channels(family_, protocol_, collective_bytes_, ranks_, channels_);
  return block_Bps * blocks / channels_;
}

double ConnectionCosts::wire_cap_Bps(RouteClass cls) const {
  return std::min(block_cap_Bps(cls), bandwidth_cap_Bps() / constants().wire_efficiency);
}

double ConnectionCosts::bandwidth_cap_Bps() const {
  return protocol_bandwidth_cap_Bps(protocol_, family_, topology_.gpu_arch(), nodes_, channels_,
                                    topology_.host_cpu());
}

const ConnectionCosts::Entry& ConnectionCosts::entry(int from_rank, int to_rank, int ir_channel) const {
  const auto it = connections_.find(connection_key(from_rank, to_rank, ir_channel));
  CCLAB_ENFORCE(it != connections_.end(), "no connection {} -> {} on channel {}", from_rank, to_rank,
                ir_channel);
  return it->second;
}

const ConnectionCost& ConnectionCosts::at(int from_rank, int to_rank, int ir_channel) const {
  return entry(from_rank, to_rank, ir_channel).cost;
}

double ConnectionCosts::route_share_Bps(int from_rank, int to_rank, int ir_channel) const {
  return entry(from_rank, to_rank, ir_channel).route_bandwidth_Bps;
}

}  // namespace cclab
