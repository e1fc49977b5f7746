// The topology as a SimGrid platform: every GPU a host (its speed is the reduction throughput, one flop per
// byte reduced), every topology link a split-duplex link (up = a -> b) with the link kind's effective
// bandwidth and latency, and for every pair of ranks that exchange data the route the topology chose, link by
// link. Switches, NICs and PCIe switches need no SimGrid object of their own: routes are explicit lists of
// links (a Full zone).
#pragma once

#include <functional>
#include <limits>
#include <string>
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
// `protocol_link(a, b)`, when given and not empty, adds a private link with those at the end of the route
// a -> b; a fat pipe, so that it limits every message on its own and shares nothing. The topology's
// background flows get hosts named after their vertices (background_host) and their routes.
// `switch_ranks`: ranks whose switch ops need the switch they reduce in as a host (switch_host: their
// NVSwitch, or the SHARP switch their NIC hangs off), reached over their port link both ways.
struct SwitchRank {
  int rank = 0;
  topo::SwitchPort port;
};
void build_platform(const topo::Topology& topology, int world_size, const RankPairs& pairs, double host_speed,
                    const std::function<ProtocolLink(int, int)>& protocol_link = {},
                    const std::vector<SwitchRank>& switch_ranks = {});

// The equivalent SimGrid XML (platform version 4.1), for inspection and for SMPI runs.
std::string platform_xml(const topo::Topology& topology, int world_size, const RankPairs& pairs,
                         double host_speed);

std::string host_name(const topo::Topology& topology, int rank);
// The host of a background flow's endpoint (after build_platform).
std::string background_host(const topo::Topology& topology, topo::VertexId vertex);
// The host of the switch at the end of `port` (after build_platform with it among switch_ranks).
std::string switch_host(const topo::Topology& topology, const topo::SwitchPort& port);

}  // namespace cclab::sim
