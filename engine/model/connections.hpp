// The α-β model's view of the network: one entry per connection (sender, receiver, IR channel, in global
// ranks) with its route's latency and its share of bandwidth. Channels run concurrently and split a link
// evenly, with the streams of other jobs' background flows (topology.hpp) counted as channels; the phases of
// one channel (a ring's reduce-scatter and allgather, the steps of halving-doubling) follow each other and do
// not. A planner may run each network channel as several IR channels (tree: up and down): `lanes_per_channel`
// of them count once. Shared by the explicit walk (engine/model/cost.cpp) and the compact recurrence
// (engine/model/compact_cost.cpp), so both see the same shares. A protocol (engine/model/protocol.hpp) turns
// each connection's route latency and share into what one message pays; the routes and shares are computed
// once, so costing a schedule under several protocols routes it once.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "engine/model/protocol.hpp"
#include "topology/topology.hpp"

namespace cclab {

struct ConnectionCost {
  double latency_s = 0;
  double bandwidth_Bps = 0;  // +inf for a rank talking to itself over no link
  // The rate a message's bytes move at while on the wire; bandwidth_Bps paces the next one (a pipelined
  // connection sends no faster than its share). The same in the α-β model; the pattern-level simulator makes
  // it faster where the other flows on the connection's links leave it room (sim/simulator.hpp).
  double wire_Bps = 0;
  bool operator==(const ConnectionCost&) const = default;
};

// One message of `bytes` on a connection whose wire is free from `free_s` (updated): the α-β rule that the
// explicit walk and the ring and tree recurrences share, with one arithmetic so that they give the same
// doubles (engine/model/cost.hpp). Pipelined (NCCL's protocols): it leaves when the sender has started and
// the wire is free, and the wire is free again once it is on it. Store-and-forward (raw): it also waits for
// the receive to be posted, and the wire is free once it has arrived. Returns its arrival.
// `wire_begin_s`, when given, is set to when the message takes the wire.
inline double deliver(const ConnectionCost& conn, bool pipelined, double send_start_s, double recv_start_s,
                      double bytes, double& free_s, double* wire_begin_s = nullptr) {
  const double begin =
      pipelined ? std::max(send_start_s, free_s) : std::max({send_start_s, recv_start_s, free_s});
  const double pace_s = std::isinf(conn.bandwidth_Bps) ? 0.0 : bytes / conn.bandwidth_Bps;
  const double wire_s = std::isinf(conn.wire_Bps) ? 0.0 : bytes / conn.wire_Bps;
  const double arrival = begin + conn.latency_s + wire_s;
  free_s = pipelined ? begin + pace_s : arrival;
  if (wire_begin_s) *wire_begin_s = begin;
  return arrival;
}

// When a receive that reduces what it receives completes, given when its message took the wire, when the
// receiver reached the op, when the receive alone would complete (max of arrival and that) and the
// reduction's time. Under NCCL's protocols the kernel reduces the data as it comes in (its
// receive-reduce-send works slice by slice), so the reduction runs beside the transfer, from when the bytes
// take the wire or the receiver gets there, and the receive ends when both are done: a reduction faster than
// the wire costs nothing. A connection's reductions run one after another (its channel's thread block takes
// its slices in order), from `reduce_free_s`, which this advances. Raw messages (cclab's own executors: a
// receive, then a reduction kernel) reduce after arrival.
inline double reduced_end(bool pipelined, double wire_begin_s, double recv_start_s, double received_s,
                          double reduce_s, double& reduce_free_s) {
  if (!pipelined) return received_s + reduce_s;
  reduce_free_s = std::max({wire_begin_s, recv_start_s, reduce_free_s}) + reduce_s;
  return std::max(received_s, reduce_free_s);
}

class ConnectionCosts {
 public:
  // `family`: whose protocol constants price the messages (algorithm_family of the schedule).
  // `collective_bytes` over `ranks`, where given, is the collective's size (nccl-tests' size): NCCL runs a
  // small ring or tree collective on fewer thread blocks than it has channels (nccl_collective_channels), so
  // the per-block speed cap is scaled by those over the schedule's channels — the same aggregate as NCCL's
  // fewer, fuller channels, where a step's latency does not depend on how many channels share the bytes.
  ConnectionCosts(const topo::Topology& topology, int lanes_per_channel,
                  AlgorithmFamily family = AlgorithmFamily::Ring, std::uint64_t collective_bytes = 0,
                  int ranks = 0);

  // Declares a connection and adds `bytes` to what it carries over the whole schedule; all of them before
  // finish().
  void add(int from_rank, int to_rank, int ir_channel, std::uint64_t bytes = 0);
  // Declares a rank's switch port on an IR channel for its switch ops, adding the bytes they move up to the
  // switch and down from it; all of them before finish(). The port is the rank's NVSwitch port (NVLS), or
  // with `in_network` (its groups span nodes) its NIC's link to a SHARP switch (topo::sharp_port).
  void add_switch(int rank, int ir_channel, std::uint64_t up_bytes, std::uint64_t down_bytes,
                  bool in_network = false);
  const topo::Topology& topology() const { return topology_; }
  // Routes every connection and splits each link among the network channels crossing it; messages then cost
  // what `protocol` (concrete, not Auto) makes of the route.
  void finish(Protocol protocol = Protocol::Raw);
  // Re-prices every connection for another concrete protocol (after finish()).
  void use_protocol(Protocol protocol);
  // Replaces each connection's share of its route (finish()'s even split of every link among the channels
  // crossing it) by share(from_rank, to_rank, ir_channel, even_share_Bps), then re-prices under the current
  // protocol: how the pattern-level simulator (sim/simulator.hpp) brings in SimGrid's max-min rates. A share
  // gives the pace of the connection's messages and the rate of each one on the wire (ConnectionCost).
  struct RouteShare {
    double pace_Bps = 0, wire_Bps = 0;
  };
  void reshare(const std::function<RouteShare(int, int, int, double)>& share);
  Protocol protocol() const { return protocol_; }
  AlgorithmFamily family() const { return family_; }
  // The current protocol's constants in this family (its launch cost, wire efficiency, step latencies).
  const ProtocolConstants& constants() const { return protocol_constants(protocol_, family_); }
  bool pipelined() const { return is_pipelined(protocol_); }
  // Whether some connection runs over PCIe only (no NVLink, no network): where NCCL does not enable LL128.
  bool crosses_pcie() const { return crosses_pcie_; }
  const ConnectionCost& at(int from_rank, int to_rank, int ir_channel) const;
  // A connection's share of its route's bandwidth before the protocol prices it (finish()'s even split, or
  // what reshare() set).
  double route_share_Bps(int from_rank, int to_rank, int ir_channel) const;
  // A declared switch port's share per direction: the port link's bandwidth times the switch's efficiency
  // (nvls_efficiency; kSharpEfficiency in the network), split evenly among the channels on it like any link,
  // and the trip through the switch (the link's latency both ways).
  struct SwitchPort {
    double latency_s = 0;
    double up_Bps = 0, down_Bps = 0;
  };
  // A network channel whose switch ops run on IR channels of their own (nvls_tree's reduce and multicast,
  // NCCL's separate warps) is one channel on the port, its share split per direction by the bytes each of
  // those IR channels sends that way.
  const SwitchPort& switch_port(int rank, int ir_channel) const;
  // The protocol's ceiling on one connection's payload bandwidth (protocol_bandwidth_cap_Bps for the GPUs'
  // architecture, the nodes and the network channels of the declared connections); +inf where none.
  double bandwidth_cap_Bps() const;
  // The most one connection over a route of class `cls` puts on the wire per second under the current
  // protocol: one thread block's speed (channel_speed_cap_Bps, for ring and tree channels under NCCL's
  // protocols) and the protocol's payload ceiling over its wire efficiency. +inf when neither applies.
  double wire_cap_Bps(RouteClass cls) const;
  // One thread block's wire speed on a route of class `cls` (wire_cap_Bps's first part).
  double block_cap_Bps(RouteClass cls) const;
  // A floor under the schedule's time after its launch: every byte a link carries takes its time on the wire,
  // so no schedule over these connections beats its busiest directed link's bytes / (bandwidth x the
  // protocol's wire efficiency). The even split (finish()) can break it where one network channel's lanes
  // share a link — a pipelined tree's up and down lanes leave a GPU through one NVSwitch port — and count
  // once; this keeps such a schedule to what the links can carry.
  double busiest_link_s() const { return busiest_link_wire_s_ / constants().wire_efficiency; }
  // What a schedule of `kernels` kernels in a row (Schedule::kernels) pays in launches before its first op:
  // the current protocol's launch cost once per kernel, since a kernel starts when the one before has ended.
  double launches_s(int kernels = 1) const { return constants().launch_s * std::max(1, kernels); }
  // The earliest any schedule over these connections can end: its launches, then its busiest link's time.
  double link_floor_s(int kernels = 1) const { return launches_s(kernels) + busiest_link_s(); }
  // The nodes the declared connections span (after finish()).
  int nodes() const { return nodes_; }
  // The most bytes one rank sends another over the whole schedule, and the network channels they go on:
  // where every pair of ranks exchanges once (alltoall, gather, scatter, sendrecv, the hypercube's steps),
  // the largest point-to-point transfer and the channels the schedule gives its peer. A rank's copies to
  // itself are not transfers. Zeros without connections between ranks.
  struct Transfer {
    std::uint64_t bytes = 0;
    int channels = 0;
  };
  Transfer largest_transfer() const;
  std::size_t size() const { return connections_.size(); }

  // The keys connections and switch ports are kept by, for walks that keep state per connection or port:
  // ranks below 2^24, IR channels below 2^16.
  static std::uint64_t port_key(int rank, int ir_channel) {
    return (static_cast<std::uint64_t>(rank) << 16) | static_cast<std::uint64_t>(ir_channel);
  }
  static std::uint64_t connection_key(int from_rank, int to_rank, int ir_channel) {
    return (static_cast<std::uint64_t>(from_rank) << 40) | (static_cast<std::uint64_t>(to_rank) << 16) |
           static_cast<std::uint64_t>(ir_channel);
  }

 private:
  struct Entry {
    ConnectionCost cost;  // under protocol_
    std::uint64_t bytes = 0;
    double route_latency_s = 0, route_bandwidth_Bps = 0;
    double route_wire_Bps = -1;  // reshare()'s wire share; below 0: route_bandwidth_Bps
    RouteClass cls = RouteClass::Local;
  };
  const Entry& entry(int from_rank, int to_rank, int ir_channel) const;
  // The (rank, network channel, kind) the switch entry kept under `port_key` belongs to.
  std::uint64_t stream_key(std::uint64_t port_key, bool in_network) const;
  // The routes of rank pairs (from << 24 | to), searched on all cores for many pairs.
  std::vector<topo::Route> route_all(const std::vector<std::uint64_t>& pairs) const;

  const topo::Topology& topology_;
  int lanes_;
  AlgorithmFamily family_;
  Protocol protocol_ = Protocol::Raw;
  bool crosses_pcie_ = false;
  std::uint64_t collective_bytes_ = 0;
  int ranks_ = 0;
  int nodes_ = 0, channels_ = 0;    // spanned by the declared connections (after finish())
  double busiest_link_wire_s_ = 0;  // the busiest directed link's bytes / bandwidth (after finish())
  std::unordered_map<std::uint64_t, Entry> connections_;
  struct SwitchEntry {
    SwitchPort port;
    std::uint64_t up_bytes = 0, down_bytes = 0;
    bool in_network = false;
  };
  std::unordered_map<std::uint64_t, SwitchEntry> switch_ports_;  // by port_key
};

}  // namespace cclab
