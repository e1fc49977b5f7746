#include "sim/platform.hpp"

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "common/error.hpp"

namespace cclab::sim {
namespace sg4 = simgrid::s4u;

std::string host_name(const topo::Topology& topology, int rank) {
  return topology.vertex(topology.gpus().at(rank)).name;
}

std::string background_host(const topo::Topology& topology, topo::VertexId vertex) {
  // A GPU's host is its rank's: a neighbour's stream from or to a GPU (another job's process on it) gets a
  // host of its own there, routed from the same vertex, so the two never share a name or a route.
  const topo::Vertex& v = topology.vertex(vertex);
  return v.kind == topo::VertexKind::Gpu ? v.name + ".neighbour" : v.name;
}

std::string switch_host(const topo::Topology& topology, const topo::SwitchPort& port) {
  return topology.vertex(port.sw).name;
}

namespace {

std::string link_name(std::size_t id) {
  return fmt::format("link{}", id);
}

// Links used by the routes, so that the platform holds only what the simulation touches.
std::map<std::size_t, bool> used_links(const std::vector<topo::Route>& routes) {
  std::map<std::size_t, bool> used;
  for (const auto& r : routes)
    for (const auto& h : r.hops)
      used[h.link] = true;
  return used;
}

std::vector<topo::Route> routes_of(const topo::Topology& t, const RankPairs& pairs) {
  std::vector<topo::Route> routes;
  routes.reserve(pairs.size());
  for (auto [a, b] : pairs)
    routes.push_back(t.route_between_ranks(a, b));
  return routes;
}

}  // namespace

RouteLatencies build_platform(const topo::Topology& t, int world_size, const RankPairs& pairs,
                              double host_speed, const std::function<ProtocolLink(int, int)>& protocol_link,
                              const std::vector<SwitchRank>& switch_ranks) {
  RouteLatencies latencies;
  sg4::NetZone* zone = sg4::create_full_zone(t.name());
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < world_size; ++r)
    hosts.push_back(zone->create_host(host_name(t, r), host_speed)->seal());
  const auto routes = routes_of(t, pairs);
  std::map<std::size_t, sg4::Link*> links;  // created on first use
  const auto link_of = [&](std::size_t id) {
    auto [it, fresh] = links.try_emplace(id, nullptr);
    if (fresh) {
      it->second = zone->create_split_duplex_link(link_name(id), t.effective_bandwidth_Bps(id))->seal();
    }
    return it->second;
  };
  for (const auto& [id, unused] : used_links(routes))
    link_of(id);
  // A neighbour job's endpoints (topology.hpp, background flows): hosts named after their vertices, and
  // their routes over the same links.
  std::map<topo::VertexId, sg4::Host*> background_hosts;
  for (const auto& flow : t.background()) {
    for (topo::VertexId v : {flow.from, flow.to})
      if (!background_hosts.count(v))
        background_hosts[v] = zone->create_host(background_host(t, v), 1.0)->seal();
  }
  // Switches that reduce: a host each (a background flow may end there too), routed to each member over its
  // port.
  for (const auto& [r, port] : switch_ranks) {
    const topo::VertexId sw = port.sw;
    if (!background_hosts.count(sw)) background_hosts[sw] = zone->create_host(t.vertex(sw).name, 1.0)->seal();
    auto hop = [&](const topo::Hop& h) {
      return sg4::LinkInRoute(
          link_of(h.link), h.forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    };
    zone->add_route(hosts[r]->get_netpoint(), background_hosts[sw]->get_netpoint(), nullptr, nullptr,
                    {hop(port.up)}, false);
    zone->add_route(background_hosts[sw]->get_netpoint(), hosts[r]->get_netpoint(), nullptr, nullptr,
                    {hop(port.down)}, false);
    latencies.switch_s_[RouteLatencies::key(r, static_cast<int>(sw))] = {
        t.effective_latency_s(port.up.link), t.effective_latency_s(port.down.link)};
  }
  std::set<std::pair<topo::VertexId, topo::VertexId>> background_routes;
  for (const auto& flow : t.background()) {
    if (!background_routes.insert({flow.from, flow.to}).second) continue;
    std::vector<sg4::LinkInRoute> hops;
    for (const auto& h : t.route(flow.from, flow.to).hops) {
      hops.emplace_back(link_of(h.link),
                        h.forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
    }
    zone->add_route(background_hosts[flow.from]->get_netpoint(), background_hosts[flow.to]->get_netpoint(),
                    nullptr, nullptr, hops, false);
  }
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    std::vector<sg4::LinkInRoute> hops;
    double latency_s = 0;
    for (const auto& h : routes[i].hops) {
      hops.emplace_back(links.at(h.link),
                        h.forward ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
      latency_s += t.effective_latency_s(h.link);
    }
    const ProtocolLink extra =
        protocol_link ? protocol_link(pairs[i].first, pairs[i].second) : ProtocolLink{};
    latency_s += extra.latency_s;
    if (std::isfinite(extra.bandwidth_Bps)) {
      // Private to the pair; a fat pipe, so that its ceiling applies to each message alone.
      hops.emplace_back(zone->create_link(fmt::format("protocol{}-{}", pairs[i].first, pairs[i].second),
                                          extra.bandwidth_Bps)
                            ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                            ->seal());
    }
    zone->add_route(hosts[pairs[i].first]->get_netpoint(), hosts[pairs[i].second]->get_netpoint(), nullptr,
                    nullptr, hops, false);
    latencies.pair_s_[RouteLatencies::key(pairs[i].first, pairs[i].second)] = latency_s;
  }
  zone->seal();
  return latencies;
}

std::string platform_xml(const topo::Topology& t, int world_size, const RankPairs& pairs, double host_speed) {
  fmt::memory_buffer out;
  fmt::format_to(
      fmt::appender(out),
      "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      "<!-- cclab: topology {} ({} GPUs); effective bandwidths and latencies of the link models -->\n"
      "<platform version=\"4.1\">\n<zone id=\"{}\" routing=\"Full\">\n",
      t.name(), world_size, t.name());
  for (int r = 0; r < world_size; ++r)
    fmt::format_to(fmt::appender(out), "  <host id=\"{}\" speed=\"{}f\"/>\n", host_name(t, r), host_speed);
  const auto routes = routes_of(t, pairs);
  for (const auto& [id, unused] : used_links(routes)) {
    const auto& l = t.link(id);
    fmt::format_to(fmt::appender(out),
                   "  <link id=\"{}\" bandwidth=\"{}Bps\" latency=\"{}s\" sharing_policy=\"SPLITDUPLEX\"/>"
                   "  <!-- {} {} - {} -->\n",
                   link_name(id), t.effective_bandwidth_Bps(id), t.effective_latency_s(id),
                   topo::to_string(l.kind), t.vertex(l.a).name, t.vertex(l.b).name);
  }
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    fmt::format_to(fmt::appender(out), "  <route src=\"{}\" dst=\"{}\" symmetrical=\"NO\">",
                   host_name(t, pairs[i].first), host_name(t, pairs[i].second));
    for (const auto& h : routes[i].hops)
      fmt::format_to(fmt::appender(out), "<link_ctn id=\"{}\" direction=\"{}\"/>", link_name(h.link),
                     h.forward ? "UP" : "DOWN");
    fmt::format_to(fmt::appender(out), "</route>\n");
  }
  fmt::format_to(fmt::appender(out), "</zone>\n</platform>\n");
  return fmt::to_string(out);
}

}  // namespace cclab::sim
