// The topology as a SimGrid platform: every GPU a host (its speed is the reduction throughput, one flop per
// byte reduced), every topology link a split-duplex link (up = a -> b) with the link kind's effective
// bandwidth, and for every pair of ranks that exchange data the route the topology chose, link by link.
// Switches, NICs and PCIe switches need no SimGrid object of their own: routes are explicit lists of links (a
// Full zone).
//
// The links carry no latency: the routes' latencies are returned, and the simulator waits a message's route
// latency before its bytes enter the network, which is how CM02 times a message too (latency, then the bytes
// at the shared rate). The difference is the sharing: CM02 weighs each flow by the inverse of its route
// latency (TCP's RTT unfairness: a 1 µs flow takes 999 parts of a link against a 1 ms flow's one), while
// InfiniBand and RoCE switches, NVSwitch and PCIe arbitrate per port and flow, whatever the distance. With no
// latency on its route every flow weighs the same (SimGrid's penalty 1), and max-min shares per flow.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "topology/topology.hpp"

namespace cclab::sim {

// The (source rank, destination rank) pairs that need a route.
using RankPairs = std::vector<std::pair<int, int>>;

// Creates the platform in the running SimGrid engine (must be called once, before the simulation).
// What a protocol adds to the route a -> b (sim/simulator.hpp): the latency its step costs beyond the
// route's own, and a ceiling on each message's rate on the wire (NCCL's LL/LL128 ceilings).
struct ProtocolLink {
  double latency_s = 0;
  double bandwidth_Bps = std::numeric_limits<double>::infinity();
};
// `protocol_link(a, b)`, when given: its latency joins the route a -> b's, and a finite ceiling becomes a
// private link at the end of the route; a fat pipe, so that it limits every message on its own and shares
// nothing. The topology's background flows get hosts named after their vertices (background_host) and their
// routes.
// `switch_ranks`: ranks whose switch ops need the switch they reduce in as a host (switch_host: their
// NVSwitch, or the SHARP switch their NIC hangs off), reached over their port link both ways.
struct SwitchRank {
  int rank = 0;
  topo::SwitchPort port;
};
// The latency of each route the platform holds, which its links leave out (above).
class RouteLatencies {
 public:
  double between(int from_rank, int to_rank) const { return pair_s_.at(key(from_rank, to_rank)); }
  // A rank's trip to a switch it reduces in (`port`: switch_ranks's), and back: the port link, each way.
  double to_switch(int rank, const topo::SwitchPort& port) const {
    return switch_s_.at(key(rank, static_cast<int>(port.sw))).first;
  }
  double from_switch(int rank, const topo::SwitchPort& port) const {
    return switch_s_.at(key(rank, static_cast<int>(port.sw))).second;
  }

 private:
  friend RouteLatencies build_platform(const topo::Topology&, int, const RankPairs&, double,
                                       const std::function<ProtocolLink(int, int)>&,
                                       const std::vector<SwitchRank>&);
  static std::uint64_t key(int a, int b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }
  std::unordered_map<std::uint64_t, double> pair_s_;
  std::unordered_map<std::uint64_t, std::pair<double, double>> switch_s_;  // by (rank, switch vertex)
};
RouteLatencies build_platform(const topo::Topology& topology, int world_size, const RankPairs& pairs,
                              double host_speed,
                              const std::function<ProtocolLink(int, int)>& protocol_link = {},
                              const std::vector<SwitchRank>& switch_ranks = {});

// The equivalent SimGrid XML (platform version 4.1), for inspection and for SMPI runs.
std::string platform_xml(const topo::Topology& topology, int world_size, const RankPairs& pairs,
                         double host_speed);

std::string host_name(const topo::Topology& topology, int rank);
// The host of a background flow's endpoint (after build_platform): the vertex's name, with ".neighbour"
// after a GPU's (its rank's host has the name).
std::string background_host(const topo::Topology& topology, topo::VertexId vertex);
// The host of the switch at the end of `port` (after build_platform with it among switch_ranks).
std::string switch_host(const topo::Topology& topology, const topo::SwitchPort& port);

}  // namespace cclab::sim
