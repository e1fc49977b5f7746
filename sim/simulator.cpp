#include "sim/simulator.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <xbt/log.h>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>

#include "common/error.hpp"
#include "engine/ir/frontier.hpp"
#include "engine/ir/pipeline.hpp"
#include "engine/ir/progress.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/model/switch_ports.hpp"
#include "engine/model/walk.hpp"
#include "sim/platform.hpp"

namespace cclab::sim {
namespace sg4 = simgrid::s4u;
namespace {

RankPairs pairs_of(const Schedule& s) {
  std::set<std::pair<int, int>> pairs;
  for (int r = 0; r < s.world_size(); ++r)
    for (const Op& op : s.ranks[r].ops)
      if (op.kind == OpKind::Send) pairs.insert({r, op.peer});
  return {pairs.begin(), pairs.end()};
}

// The topology's background flows as (source, destination) host pairs, one per stream (after build_platform).
std::vector<std::pair<sg4::Host*, sg4::Host*>> background_streams(const topo::Topology& t) {
  std::vector<std::pair<sg4::Host*, sg4::Host*>> streams;
  for (const auto& flow : t.background()) {
    for (int k = 0; k < flow.streams; ++k) {
      streams.emplace_back(sg4::Host::by_name(background_host(t, flow.from)),
                           sg4::Host::by_name(background_host(t, flow.to)));
    }
  }
  return streams;
}

// Where each rank's switch ops reduce (engine/model/switch_ports.hpp): per kind (0 inside the node, 1 in the
// network) and rank, the port, for the ranks with switch ops of that kind; and per instance its kind.
struct SwitchPorts {
  std::array<std::vector<std::optional<ReductionPort>>, 2> of;
  std::unordered_set<std::uint64_t> in_network;  // group keys (switch_ports.hpp: group_key)
};
SwitchPorts reduction_ports(const Schedule& s, const topo::Topology& t) {
  SwitchPorts ports;
  for (auto& v : ports.of)
    v.resize(s.ranks.size());
  const SwitchGroups groups = switch_groups(s);
  if (groups.empty()) return ports;
  ports.in_network = in_network_groups(groups, t);
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    for (const Op& op : s.ranks[r].ops) {
      if (!is_switch(op.kind)) continue;
      const bool network = ports.in_network.contains(group_key(op));
      if (!ports.of[network][r]) ports.of[network][r] = reduction_port(t, static_cast<int>(r), network);
    }
  }
  return ports;
}

// A transfer too large to finish: what a background stream sends, or a pattern's probe.
constexpr double kEndlessBytes = 1e18;

// Drives the schedule through SimGrid, creating each activity only when the IR's rules let it start:
// SimGrid 3.32 scans lists of pending communications, so a whole schedule created up front (a DAG of vetoed
// activities) costs time quadratic in its size. Here the IR's ordering is tracked by this class, SimGrid sees
// only the transfers and reductions that are in flight, and every completion (a SimGrid callback) starts
// whatever it unblocks. Waits (a pipelined connection's pacing, a switch instance's landing) are SimGrid
// kernel timers, not activities: SimGrid 3.32 keeps the activities started outside actors in one list that
// each completion scans to remove itself (half the time of a 128-GPU tree op by op), and waits were one
// activity in eight.
class Driver {
 public:
  // `costs`: the α-β model's connections of `s` under the protocol, for a pipelined one; `ports`: where each
  // rank's switch ops reduce (reduction_ports).
  Driver(const Schedule& s, const topo::Topology& topology, const std::vector<sg4::Host*>& hosts,
         const RouteLatencies& latencies, const SimParams& params, std::optional<ConnectionCosts> costs,
         const SwitchPorts& ports)
      : s_(s),
        topology_(topology),
        hosts_(hosts),
        latencies_(latencies),
        protocol_(params.protocol),
        pipelined_(is_pipelined(params.protocol)),
        family_(algorithm_family(s.spec.collective, s.algorithm)),
        wire_factor_(1.0 / protocol_constants(params.protocol, family_).wire_efficiency),
        elem_(static_cast<double>(dtype_size_bytes(s.spec.dtype))),
        copy_factor_(params.compute.copy_Bps > 0 && params.compute.reduce_Bps > 0
                         ? params.compute.reduce_Bps / params.compute.copy_Bps
                         : 0.0),
        reduce_free_(params.compute.reduce_Bps <= 0) {
    const int world = s.world_size();
    const int channels = std::max(1, s.num_channels());
    ranks_.reserve(world);
    result_.op_times.resize(world);
    result_.rank_end_s.assign(world, 0.0);
    for (int r = 0; r < world; ++r) {
      ranks_.emplace_back(s.ranks[r], channels);
      result_.op_times[r].assign(s.ranks[r].ops.size(), OpTiming{-1, -1});
    }
    Matching matching;
    if (auto e = check_structure(s, matching)) throw PlanError(*e);
    partner_ = std::move(matching.partner);
    instances_ = std::move(matching.instances);
    instance_started_.assign(instances_.size(), 0);
    instance_flows_.assign(instances_.size(), 0);
    if (!instances_.empty()) {
      for (int kind = 0; kind < 2; ++kind) {
        switch_hosts_[kind].assign(world, nullptr);
        switch_trip_s_[kind].assign(world, {0.0, 0.0});
        port_latency_s_[kind].assign(world, 0.0);
        switch_factor_[kind].assign(world, 1.0);
        for (int r = 0; r < world; ++r) {
          if (!ports.of[kind][r]) continue;
          const ReductionPort& reduction = *ports.of[kind][r];
          switch_hosts_[kind][r] = sg4::Host::by_name(switch_host(topology, reduction.port));
          switch_trip_s_[kind][r] = {latencies.to_switch(r, reduction.port),
                                     latencies.from_switch(r, reduction.port)};
          // The flows up and down pay the port link's latency once each; the rest of the trip lands after.
          port_latency_s_[kind][r] =
              std::max(0.0, reduction.latency_s - topology.effective_latency_s(reduction.port.link));
          switch_factor_[kind][r] = 1.0 / reduction.efficiency;
        }
      }
      instance_kind_.reserve(instances_.size());
      for (const std::vector<OpRef>& instance : instances_) {
        const Op& op = s.ranks[instance[0].rank].ops[instance[0].op];
        instance_kind_.push_back(ports.in_network.contains(group_key(op)) ? 1 : 0);
      }
    }
    if (pipelined_) {
      CCLAB_ENFORCE(costs.has_value(), "a pipelined protocol needs the connections' costs");
      costs_.emplace(std::move(*costs));
    }
  }

  // The neighbour job's streams run from time 0 until the schedule's last op completes.
  void start_all() {
    for (int r = 0; r < s_.world_size(); ++r)
      remaining_ops_ += s_.ranks[r].ops.size();
    // Each stream is a backlogged connection like ours: one flow, always on the wire.
    if (remaining_ops_ > 0) {
      for (const auto& [from, to] : background_streams(topology_)) {
        background_.push_back(sg4::Comm::sendto_init(from, to));
        background_.back()->set_payload_size(static_cast<std::uint64_t>(kEndlessBytes));
        background_.back()->start();
      }
    }
    for (int r = 0; r < s_.world_size(); ++r)
      advance(r);
  }

  // A SimGrid activity of ours finished.
  void on_completion(const sg4::Activity& activity) {
    // SimGrid is still inside this activity's completion when it calls us: release it at the next completion.
    finished_.clear();
    auto it = in_flight_.find(&activity);
    if (it == in_flight_.end()) return;
    const Task task = it->second.task;
    finished_.push_back(std::move(it->second.activity));
    in_flight_.erase(it);
    switch (task.kind) {
      case Task::Local:
        finish(task.rank, task.op);
        break;
      case Task::Reduction:
        if (auto st = streamed_.find(op_key(task.rank, task.op)); st != streamed_.end()) {
          st->second.reduced = true;
          if (!st->second.received) break;  // the message is still coming in
          streamed_.erase(st);
        }
        finish(task.rank, task.op);
        break;
      case Task::Switch:
        // The data has reached the switch and left it once all the instance's flows have arrived; it lands
        // one port latency later (up and down are two hops in a row, the flows ran side by side).
        if (--instance_flows_[task.op] == 0) {
          double latency_s = 0;
          for (const OpRef& m : instances_[task.op])
            latency_s = std::max(latency_s, port_latency_s_[instance_kind_[task.op]][m.rank]);
          simgrid::kernel::timer::Timer::set(now() + latency_s, [this, instance = task.op] {
            for (const OpRef& m : instances_[instance])
              finish(m.rank, m.op);
          });
        }
        break;
      case Task::Transfer: {
        // The message's bytes are out: the connection's next message may take the wire while this one
        // travels its route's latency.
        Connection& conn = connection_of(task);
        conn.on_wire = false;
        const double latency_s = conn.latency_s;
        if (latency_s > 0) {
          simgrid::kernel::timer::Timer::set(now() + latency_s, [this, task, &conn] { deliver(task, conn); });
        } else {
          deliver(task, conn);
        }
        pump(conn);
        break;
      }
    }
  }

  RunResult result() {
    // The launch cost delays every rank's first op: everything starts that much later (once per kernel the
    // schedule runs in a row, Schedule::kernels).
    const double launch_s = protocol_constants(protocol_, family_).launch_s * std::max(1, s_.kernels);
    for (int r = 0; r < s_.world_size(); ++r) {
      result_.rank_end_s[r] = launch_s;
      for (OpId i = 0; i < s_.ranks[r].ops.size(); ++i) {
        OpTiming& t = result_.op_times[r][i];
        if (t.end_s < 0)
          throw BackendError(fmt::format("the simulation never completed {}", format_op(s_, r, i)));
        t.start_s += launch_s, t.end_s += launch_s;
        result_.rank_end_s[r] = std::max(result_.rank_end_s[r], t.end_s);
      }
      result_.total_s = std::max(result_.total_s, result_.rank_end_s[r]);
    }
    return std::move(result_);
  }

 private:
  struct Task {
    enum Kind { Local, Transfer, Reduction, Switch } kind;
    int rank;
    OpId op;        // Switch: the instance
    int peer = -1;  // Transfer: the receiving rank and op
    OpId peer_op = kNoOp;
  };
  struct Flight {
    sg4::ActivityPtr activity;  // keeps it alive until it completes
    Task task;
  };
  struct Connection {
    // Raw: matched pairs whose both ops have started. Pipelined: messages whose sender has started. In order.
    std::deque<Task> ready;
    int in_flight = 0;
    double wire_free_s = 0;     // pipelined: when the last message admitted has left the sender
    bool wake_pending = false;  // pipelined: a timer to admit the next message is running
    bool on_wire = false;       // a message's bytes are going out
    double latency_s = -1;      // its route's (looked up once, at its first message)
  };
  static constexpr double kTimingPrecision_s = 1e-9;  // SimGrid's precision/timing default

  static std::uint64_t op_key(int rank, OpId op) {
    return (static_cast<std::uint64_t>(rank) << 40) | static_cast<std::uint64_t>(op);
  }
  Connection& connection_of(const Task& t) {
    return connections_[ConnectionCosts::connection_key(t.rank, t.peer, s_.ranks[t.rank].ops[t.op].channel)];
  }
  // Queues a message on its connection (the protocol's extra latency is a link of the route: see
  // build_platform).
  void post(const Task& transfer, int channel) {
    Connection& conn = connections_[ConnectionCosts::connection_key(transfer.rank, transfer.peer, channel)];
    if (conn.latency_s < 0) conn.latency_s = latencies_.between(transfer.rank, transfer.peer);
    conn.ready.push_back(transfer);
    pump(conn);
  }
  // Whether receive i of rank r reduces beside its message: under NCCL's protocols the kernel reduces the
  // data as it comes in (engine/model/connections.hpp reduced_end), so the reduction starts when the message
  // takes the wire or the receiver reaches the op, whichever is later, and the receive is done when both
  // have finished. (Where the α-β model runs a connection's reductions one after another, here they may
  // overlap and share the host with every other; the GPU's rate is the same.) Raw: cclab's executors
  // receive, then reduce.
  bool streams(int r, OpId i) const {
    const Op& recv = s_.ranks[r].ops[i];
    return pipelined_ && !reduce_free_ && recv.kind == OpKind::RecvReduce && recv.dst.count > 0;
  }
  void start_streamed_reduction(int r, OpId i) {
    Streamed& st = streamed_[op_key(r, i)];
    if (st.running) return;
    st.running = true;
    launch(sg4::Exec::init()->set_flops_amount(s_.ranks[r].ops[i].dst.count * elem_)->set_host(hosts_[r]),
           Task{Task::Reduction, r, i});
  }
  // The receive of a delivered message: its reduction, or done.
  void receive(int r, OpId i) {
    const Op& recv = s_.ranks[r].ops[i];
    if (auto st = streamed_.find(op_key(r, i)); st != streamed_.end()) {
      st->second.received = true;
      if (!st->second.reduced) return;  // the reduction's end completes it
      streamed_.erase(st);
      finish(r, i);
    } else if (recv.kind == OpKind::RecvReduce && recv.dst.count > 0 && !reduce_free_) {
      launch(sg4::Exec::init()->set_flops_amount(recv.dst.count * elem_)->set_host(hosts_[r]),
             Task{Task::Reduction, r, i});
    } else {
      finish(r, i);
    }
  }

  double now() const { return sg4::Engine::get_clock(); }

  template <typename Ptr>
  void launch(Ptr activity, const Task& task) {
    in_flight_.emplace(activity.get(), Flight{activity, task});
    activity->start();
  }

  // Starts the ops of rank r that the IR allows to start now.
  void advance(int r) {
    ranks_[r].start_ready([&](OpId i) {
      result_.op_times[r][i].start_s = now();
      const Op& op = s_.ranks[r].ops[i];
      if (is_switch(op.kind)) {
        const OpId instance = partner_[r][i].op;
        if (++instance_started_[instance] == instances_[instance].size()) launch_switch(instance);
        return;
      }
      if (!is_comm(op.kind)) {
        const double flops = op.count() * elem_ * (op.kind == OpKind::Copy ? copy_factor_ : 1.0);
        if (flops <= 0 || reduce_free_) {
          finish(r, i);
        } else {
          launch(sg4::Exec::init()->set_flops_amount(flops)->set_host(hosts_[r]), Task{Task::Local, r, i});
        }
        return;
      }
      const OpRef other = partner_[r][i];
      const bool sending = op.kind == OpKind::Send;
      if (pipelined_) {
        // The receiver has buffers posted ahead: a send leaves now; a receive takes what already arrived.
        if (sending) {
          post(Task{Task::Transfer, r, i, other.rank, other.op}, op.channel);
        } else {
          // A message already on the wire (or arrived) starts its reduction now.
          if (streamed_.contains(op_key(r, i))) start_streamed_reduction(r, i);
          if (arrived_.erase(op_key(r, i)) > 0) receive(r, i);
        }
        return;
      }
      if (!ranks_[other.rank].started(other.op)) return;  // the peer queues the pair when it starts
      const Task transfer{Task::Transfer, sending ? r : other.rank, sending ? i : other.op,
                          sending ? other.rank : r, sending ? other.op : i};
      post(transfer, op.channel);
    });
  }

  // Puts the connection's next message on the wire. A connection (a queue pair, an NVLink stream) sends its
  // messages in order, one on the wire at a time: one flow in the max-min sharing, however many messages it
  // has in flight, as a neighbour's stream is. Raw: one message in flight (store-and-forward). Pipelined: up
  // to NCCL_STEPS = 8 in flight (on the wire or travelling its latency), each taking the wire once the
  // previous one has left it and not before it would have left at the connection's share of its route (the
  // α-β model's wire time).
  void pump(Connection& conn) {
    const int window = pipelined_ ? kNcclSteps : 1;
    while (conn.in_flight < window && !conn.ready.empty() && !conn.on_wire) {
      const Task t = conn.ready.front();
      const Op& send = s_.ranks[t.rank].ops[t.op];
      const double payload = send.src.count * elem_;
      if (pipelined_) {
        // Closer than SimGrid's timing precision (1e-9 s), a wake-up would come back at the same instant
        // (an activity that short completes without moving the clock), again and again.
        if (conn.wire_free_s - now() > kTimingPrecision_s) {
          if (!conn.wake_pending) {
            conn.wake_pending = true;
            simgrid::kernel::timer::Timer::set(conn.wire_free_s, [this, &conn] {
              conn.wake_pending = false;
              pump(conn);
            });
          }
          return;
        }
        const double share_Bps = costs_->at(t.rank, t.peer, send.channel).bandwidth_Bps;
        conn.wire_free_s = now() + (std::isinf(share_Bps) ? 0.0 : payload / share_Bps);
      }
      conn.ready.pop_front();
      ++conn.in_flight;
      conn.on_wire = true;
      if (streams(t.peer, t.peer_op)) {
        if (ranks_[t.peer].started(t.peer_op))
          start_streamed_reduction(t.peer, t.peer_op);
        else
          streamed_[op_key(t.peer, t.peer_op)];  // its reduction starts with the receive
      }
      // The protocol's flags and line format travel too: bytes / efficiency on the wire.
      auto comm = sg4::Comm::sendto_init(hosts_[t.rank], hosts_[t.peer]);
      comm->set_payload_size(static_cast<std::uint64_t>(std::llround(payload * wire_factor_)));
      launch(comm, t);
    }
  }

  // A message has arrived: its send is done, and its receive too unless the receiver has not reached it
  // (pipelined: the data waits in its buffer; Raw: the receiver started before the message left).
  void deliver(const Task& transfer, Connection& conn) {
    finish(transfer.rank, transfer.op);
    if (ranks_[transfer.peer].started(transfer.peer_op)) {
      receive(transfer.peer, transfer.peer_op);
    } else {
      arrived_.insert(op_key(transfer.peer, transfer.peer_op));
    }
    --conn.in_flight;
    pump(conn);
  }

  // A switch flow: its bytes enter the network once its route latency has passed (the platform's links carry
  // none, sim/platform.hpp), and share the links by max-min with every flow alike.
  void transmit(sg4::Host* from, sg4::Host* to, double wire_bytes, double latency_s, const Task& task) {
    auto start = [this, from, to, wire_bytes, task] {
      auto comm = sg4::Comm::sendto_init(from, to);
      comm->set_payload_size(static_cast<std::uint64_t>(std::llround(wire_bytes)));
      launch(comm, task);
    };
    if (latency_s > 0) {
      simgrid::kernel::timer::Timer::set(now() + latency_s, std::move(start));
    } else {
      start();
    }
  }

  // A switch instance whose members have all started: each member's bytes up to the switch and down from it
  // as two flows over its port (a SwitchReduce sends the member's copy of every member's chunk up and takes
  // its own result down; a SwitchStore the reverse), at the switch's efficiency.
  void launch_switch(OpId instance) {
    const std::vector<OpRef>& members = instances_[instance];
    const bool reduce = s_.ranks[members[0].rank].ops[members[0].op].kind == OpKind::SwitchReduce;
    InstanceElems elems;
    for (const OpRef& m : members)
      elems.add(instance_chunk(s_.ranks[m.rank].ops[m.op]));
    const double all_bytes = static_cast<double>(elems.total()) * elem_;
    for (const OpRef& m : members) {
      const double own = s_.ranks[m.rank].ops[m.op].count() * elem_;
      for (const bool up : {true, false}) {
        const int kind = instance_kind_[instance];
        const double payload = (up == reduce ? all_bytes : own) * switch_factor_[kind][m.rank];
        ++instance_flows_[instance];
        sg4::Host* const sw = switch_hosts_[kind][m.rank];
        transmit(up ? hosts_[m.rank] : sw, up ? sw : hosts_[m.rank], payload,
                 up ? switch_trip_s_[kind][m.rank].first : switch_trip_s_[kind][m.rank].second,
                 Task{Task::Switch, -1, instance});
      }
    }
  }

  // (Inside advance(r), the frontier's own start loop picks up what this lets start.)
  void finish(int r, OpId i) {
    result_.op_times[r][i].end_s = now();
    if (--remaining_ops_ == 0) {
      // Cancelled, not destroyed: SimGrid finishes cancelling them in its next step.
      for (const sg4::CommPtr& c : background_)
        c->cancel();
    }
    if (ranks_[r].complete(i)) advance(r);
  }

  const Schedule& s_;
  const topo::Topology& topology_;
  const std::vector<sg4::Host*>& hosts_;
  const RouteLatencies& latencies_;
  Protocol protocol_;
  bool pipelined_;
  AlgorithmFamily family_;
  double wire_factor_;
  std::optional<ConnectionCosts> costs_;  // pipelined: the α-β model's latencies and shares, per connection
  std::unordered_set<std::uint64_t> arrived_;  // pipelined: receives whose data is in their buffer
  struct Streamed {
    bool running = false, reduced = false, received = false;
  };
  std::unordered_map<std::uint64_t, Streamed> streamed_;  // pipelined: receive-reduces whose message is out
  double elem_, copy_factor_;
  bool reduce_free_;
  std::vector<RankFrontier> ranks_;
  std::vector<std::vector<OpRef>> partner_;
  std::vector<std::vector<OpRef>> instances_;  // switch instances (engine/ir/progress.hpp)
  std::vector<std::size_t> instance_started_;  // members that have started each
  std::vector<int> instance_flows_;            // flows of each still in flight
  // Per kind (0: NVSwitch, 1: SHARP) and rank with switch ops of that kind: the trip's latency past the
  // flows, the switch it reduces in, the bytes on its port's wire per payload byte.
  std::array<std::vector<double>, 2> port_latency_s_;
  std::array<std::vector<sg4::Host*>, 2> switch_hosts_;
  std::array<std::vector<std::pair<double, double>>, 2> switch_trip_s_;  // the port link's latency up, down
  std::array<std::vector<double>, 2> switch_factor_;
  std::vector<int> instance_kind_;  // per switch instance
  std::unordered_map<std::uint64_t, Connection> connections_;
  std::unordered_map<const sg4::Activity*, Flight> in_flight_;
  std::vector<sg4::ActivityPtr> finished_;
  std::size_t remaining_ops_ = 0;
  std::vector<sg4::CommPtr> background_;
  RunResult result_;
};

// Starts SimGrid in this (child) process: CM02 max-min, no cross-traffic, no TCP corrections (see the
// header).
std::unique_ptr<sg4::Engine> start_engine() {
  int argc = 1;
  char arg0[] = "cclab-sim";
  char* argv[] = {arg0, nullptr};
  xbt_log_control_set("root.thresh:critical");
  auto engine = std::make_unique<sg4::Engine>(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  return engine;
}

// What a pipelined protocol adds to a route a -> b: the α-β model's max(route, step latency) - route, and its
// ceiling on a message's payload rate (on the wire: payload / efficiency). Empty for Raw.
std::function<ProtocolLink(int, int)> protocol_links(const topo::Topology& t, Protocol protocol,
                                                     const ConnectionCosts& costs) {
  if (!is_pipelined(protocol)) return {};
  const AlgorithmFamily family = costs.family();
  return [&t, &costs, protocol, family](int a, int b) {
    const topo::Route route = t.route_between_ranks(a, b);
    const RouteClass cls = route_class(route, t);
    return ProtocolLink{message_cost(protocol, family, cls, route.latency_s, 1.0).latency_s - route.latency_s,
                        costs.wire_cap_Bps(cls)};
  };
}

double host_speed_of(const SimParams& params) {
  return params.compute.reduce_Bps > 0 ? params.compute.reduce_Bps : 1e30;
}

std::vector<sg4::Host*> hosts_of(const topo::Topology& t, int world) {
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < world; ++r)
    hosts.push_back(sg4::Host::by_name(host_name(t, r)));
  return hosts;
}

// Builds the platform and runs the schedule op by op; called inside the child process.
RunResult run_in_simgrid(const Schedule& s, const topo::Topology& t, const SimParams& params) {
  const auto engine = start_engine();
  const int world = s.world_size();
  std::optional<ConnectionCosts> costs;
  std::function<ProtocolLink(int, int)> protocol_link;
  if (is_pipelined(params.protocol)) {
    costs.emplace(t, s.lanes_per_channel, algorithm_family(s.spec.collective, s.algorithm), s.spec.bytes(),
                  s.spec.world_size);
    add_connections(s, *costs);
    costs->finish(params.protocol);
    protocol_link = protocol_links(t, params.protocol, *costs);
  }
  const SwitchPorts ports = reduction_ports(s, t);
  std::vector<SwitchRank> switch_ranks;
  for (int r = 0; r < world; ++r)
    for (const auto& of_kind : ports.of)
      if (of_kind[r]) switch_ranks.push_back({r, of_kind[r]->port});
  const RouteLatencies latencies =
      build_platform(t, world, pairs_of(s), host_speed_of(params), protocol_link, switch_ranks);
  const std::vector<sg4::Host*> hosts = hosts_of(t, world);
  Driver driver(s, t, hosts, latencies, params, std::move(costs), ports);
  sg4::Activity::on_completion_cb([&driver](const sg4::Activity& a) { driver.on_completion(a); });
  driver.start_all();
  engine->run();
  return driver.result();
}

// ---- pattern-level mode ----

// The rate (bytes/s on the wire) of each of `flows`, running together and alone on the platform, as SimGrid's
// max-min sharing solves it: every flow starts with a payload too large to finish, and its rate is what it
// moves over a window in which nothing starts or ends (the links carry no latency, sim/platform.hpp). The
// flows are then suspended, which takes them off the links at once, and left to the engine (detached): a
// cancelled flow stays on its links until the engine next runs (the next pattern's whole window, where a
// neighbour job's streams, in every pattern, counted twice from the second on), and running the engine to
// take them off costs SimGrid a scan of its activities per flow (a 4,096-GPU ring went from 0.5 s to 4.6 s).
std::vector<double> solve_pattern(sg4::Engine& engine,
                                  const std::vector<std::pair<sg4::Host*, sg4::Host*>>& flows) {
  constexpr double kWindowS = 100.0;  // kEndlessBytes is far more than 100 s of the fastest link moves
  std::vector<sg4::CommPtr> comms;
  comms.reserve(flows.size());
  for (const auto& [from, to] : flows) {
    comms.push_back(sg4::Comm::sendto_init(from, to));
    comms.back()->set_payload_size(static_cast<std::uint64_t>(kEndlessBytes));
    comms.back()->detach();
  }
  engine.run_until(sg4::Engine::get_clock() + kWindowS);
  std::vector<double> rates(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    rates[i] = (kEndlessBytes - comms[i]->get_remaining()) / kWindowS;
    if (!(rates[i] > 0)) {
      throw BackendError(fmt::format("simulator: the flow {} -> {} did not move in SimGrid",
                                     flows[i].first->get_name(), flows[i].second->get_name()));
    }
  }
  for (sg4::CommPtr& c : comms)
    c->suspend();
  return rates;
}

// Thrown by a pattern-level simulation, inside its child process, when the schedule has to be simulated op
// by op instead (phase_shares), and again in the parent when the child says so.
struct OpByOpNeeded {};

// A flow's route as the pattern solve sees it: the links it shares with other flows, and the least ceiling
// of the fat-pipe links on it (a protocol's per-message limit, sim/platform.hpp), which bound it alone.
struct FlowRoute {
  std::vector<sg4::Link*> shared;
  double ceiling_Bps = std::numeric_limits<double>::infinity();
};
FlowRoute flow_route(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  from->route_to(to, links, nullptr);
  FlowRoute route;
  for (sg4::Link* l : links) {
    if (l->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE)
      route.ceiling_Bps = std::min(route.ceiling_Bps, l->get_bandwidth());
    else
      route.shared.push_back(l);
  }
  return route;
}

// What one phase's flows get beyond their solved rates (`used`: each flow's max-min rate, no more than the
// even share its messages are paced at), from what they move on average: each pipeline (phase_flow_groups)
// at its throughput, its slowest flow's rate.
// - Whether the phase must run op by op instead. Its tree's up and down flows are solved apart; with every
//   flow at its pipeline's throughput they fit every shared link, solving them together gives each flow the
//   same rate however long they overlap (a flow's bottleneck in its own group was saturated by that group
//   alone). Where they do not fit, it depends on who meets on a saturated link: lanes of one network channel
//   (`lanes_per_channel` IR channels each: a chain's up and down flows through one port, four PCIe GPUs
//   behind one NIC) contend for as long as the pipeline is full, which depends on the timing (the PCIe case
//   solved together 55 % slower than op by op, apart 14 % faster): op by op. Up flows of one channel and down
//   flows of another (NCCL's tree layout, run_patterns) keep their own rates, and so do CollNet Direct's
//   scatter and gather, which meet only while rounds overlap, where the port's bytes bound them (within
//   2.2 % of op by op on 16 DGX H100 nodes, 1 MiB to 256 MiB). Tree and Direct flows that cross a
//   neighbour's backlogged streams, which take whatever a link has left: op by op.
// - Each flow's rate on the wire: a flow that is not its pipeline's slowest is off the wire part of the
//   time, and so are the flows beside it, so a message gets what its links have left beyond the others'
//   average load, up to its route's ceiling, and never less than its solved rate. On a saturated link that
//   is the max-min share again; in a ring whose NICs set the pace, the NVSwitch hops move at their thread
//   block's speed, as op by op (dgx_a100:8, 128 MiB under Simple: 7.6 % slower by pattern without it).
//   Flows beside a neighbour's streams keep their solved rates.
struct PhaseShares {
  bool op_by_op = false;
  std::map<RankConnection, double> wire_Bps;
};
PhaseShares phase_shares(const std::vector<FlowGroup>& groups, const std::map<RankConnection, double>& used,
                         const std::vector<sg4::Host*>& hosts, const std::set<const sg4::Link*>& streamed,
                         int lanes_per_channel) {
  std::map<int, double> throughput;
  for (const FlowGroup& g : groups) {
    for (std::size_t i = 0; i < g.flows.size(); ++i) {
      const double r = used.at(g.flows[i]);
      auto [it, first] = throughput.try_emplace(g.pipeline[i], r);
      if (!first) it->second = std::min(it->second, r);
    }
  }
  std::vector<std::vector<FlowRoute>> routes(groups.size());  // per group, per flow
  std::map<sg4::Link*, double> load_Bps;
  PhaseShares out;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const FlowGroup& g = groups[k];
    for (std::size_t i = 0; i < g.flows.size(); ++i) {
      const RankConnection& c = g.flows[i];
      const FlowRoute& route = routes[k].emplace_back(flow_route(hosts[c.from], hosts[c.to]));
      for (sg4::Link* l : route.shared) {
        if ((g.tree || g.alternating) && streamed.contains(l)) out.op_by_op = true;
        load_Bps[l] += throughput.at(g.pipeline[i]);
      }
    }
  }
  constexpr double kTolerance = 1e-6;  // the solved rates are measured over a finite window
  std::set<sg4::Link*> saturated;
  for (const auto& [l, load] : load_Bps)
    if (load > l->get_bandwidth() * (1 + kTolerance)) saturated.insert(l);
  if (!saturated.empty() && !out.op_by_op) {
    // Which group each network channel's flows on a saturated link belong to: two are its lanes meeting.
    std::map<std::pair<sg4::Link*, int>, std::size_t> group_of;
    const int lanes = std::max(1, lanes_per_channel);
    for (std::size_t k = 0; k < groups.size() && !out.op_by_op; ++k) {
      for (std::size_t i = 0; i < groups[k].flows.size(); ++i) {
        for (sg4::Link* l : routes[k][i].shared) {
          if (!saturated.contains(l)) continue;
          const auto [at, fresh] = group_of.try_emplace({l, groups[k].flows[i].ir_channel / lanes}, k);
          if (!fresh && at->second != k && !(groups[k].alternating && groups[at->second].alternating))
            out.op_by_op = true;
        }
      }
    }
  }
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const FlowGroup& g = groups[k];
    for (std::size_t i = 0; i < g.flows.size(); ++i) {
      const RankConnection& c = g.flows[i];
      const FlowRoute& route = routes[k][i];
      const double own = throughput.at(g.pipeline[i]);
      const bool beside_streams = std::any_of(route.shared.begin(), route.shared.end(),
                                              [&](sg4::Link* l) { return streamed.contains(l); });
      double wire = route.ceiling_Bps;
      for (sg4::Link* l : route.shared)
        wire = std::min(wire, l->get_bandwidth() - (load_Bps.at(l) - own));
      out.wire_Bps[c] = beside_streams ? used.at(c) : std::max(used.at(c), wire);
    }
  }
  return out;
}

// A SHARP or NVLS pass (simulates_by_pattern) goes by pattern at the α-β model's even share of its switch
// ports (its NIC's link to the SHARP switch, and under NVLS each GPU's NVSwitch port), which is what max-min
// sharing gives its switch flows where nothing else crosses those links: the ports' channels, all busy at
// once (op by op agrees within 0.3 % on 16 DGX H100 nodes, 1 MiB to 256 MiB). Where a connection of the same
// phase (`flows`, CollNet Direct's own messages inside a node aside: they cross no SHARP port) or a
// neighbour's stream crosses a port, who gets what depends on the timing: op by op.
void require_lone_switch_ports(const CompactSchedule& s, const topo::Topology& t, int phase,
                               const std::vector<FlowGroup>& flows) {
  std::unordered_set<std::size_t> ports;
  for (const Lane& lane : s.phases().at(phase).lanes) {
    std::visit(PassHandlers{[&](const NvlsPass&) {
                              for (const int rank : lane.ranks)
                                ports.insert(reduction_port(t, rank, false).port.link);
                            },
                            [&](const SharpPass& sharp) {
                              for (const int rank : lane.ranks) {
                                ports.insert(reduction_port(t, rank, true).port.link);
                                if (sharp.intra == SharpIntra::Nvls)
                                  ports.insert(reduction_port(t, rank, false).port.link);
                              }
                            },
                            // No switch ports (an NVLSTree or explicit lane runs op by op anyway).
                            [](const RingPass&) {}, [](const TreePass&) {}, [](const NvlsTreePass&) {},
                            [](const ExplicitPass&) {}},
               *lane.pass);
  }
  if (ports.empty()) return;
  auto crosses = [&](topo::VertexId from, topo::VertexId to) {
    const topo::Route route = t.route(from, to);
    return std::any_of(route.hops.begin(), route.hops.end(),
                       [&](const topo::Hop& h) { return ports.contains(h.link); });
  };
  for (const auto& stream : t.background())
    if (crosses(stream.from, stream.to)) throw OpByOpNeeded{};
  // Each pair of ranks routed once: CollNet Direct's scatter and gather, on every channel, share a pair.
  std::set<std::pair<int, int>> pairs;
  for (const FlowGroup& g : flows)
    for (const RankConnection& c : g.flows)
      pairs.emplace(c.from, c.to);
  for (const auto& [from, to] : pairs)
    if (crosses(t.gpus()[from], t.gpus()[to])) throw OpByOpNeeded{};
}

// The pattern-level simulation (sim/simulator.hpp), inside the child process; throws OpByOpNeeded where
// phase_shares says a phase's tree lanes contend.
RunResult run_patterns(const CompactSchedule& s, const topo::Topology& t, const SimParams& params) {
  const auto engine = start_engine();
  const int world = s.world_size();
  ConnectionCosts costs(t, s.params.lanes_per_channel, algorithm_family(s.spec.collective, s.algorithm),
                        s.spec.bytes(), s.spec.world_size);
  declare_connections(s, costs);
  costs.finish(params.protocol);
  std::vector<std::vector<FlowGroup>> phases;
  std::set<std::pair<int, int>> pairs;
  for (int p = 0; p < static_cast<int>(s.phases().size()); ++p) {
    phases.push_back(phase_flow_groups(s, p));
    require_lone_switch_ports(s, t, p, phases.back());
    for (const FlowGroup& g : phases.back())
      for (const RankConnection& c : g.flows)
        pairs.insert({c.from, c.to});
  }
  build_platform(t, world, RankPairs(pairs.begin(), pairs.end()), host_speed_of(params),
                 protocol_links(t, params.protocol, costs));
  const std::vector<sg4::Host*> hosts = hosts_of(t, world);
  const auto background = background_streams(t);
  // Each distinct pattern solved once; a connection in several phases keeps its least rate.
  std::map<std::vector<RankConnection>, std::vector<double>> solved;
  std::map<RankConnection, double> rate;
  std::vector<const std::vector<RankConnection>*> patterns;
  for (const auto& groups : phases)
    for (const FlowGroup& g : groups)
      patterns.push_back(&g.flows);
  for (const std::vector<RankConnection>* pattern : patterns) {
    const std::vector<RankConnection>& flows = *pattern;
    auto [it, fresh] = solved.try_emplace(flows);
    if (fresh) {
      // The phase's flows, then the neighbour job's streams, which share the links the whole time.
      std::vector<std::pair<sg4::Host*, sg4::Host*>> endpoints;
      for (const RankConnection& c : flows)
        endpoints.emplace_back(hosts[c.from], hosts[c.to]);
      endpoints.insert(endpoints.end(), background.begin(), background.end());
      it->second = solve_pattern(*engine, endpoints);
    }
    for (std::size_t i = 0; i < flows.size(); ++i) {
      auto [r, first] = rate.try_emplace(flows[i], it->second[i]);
      if (!first) r->second = std::min(r->second, it->second[i]);
    }
  }
  // A pipelined connection's messages leave at its even share of the route (the op-level simulation paces
  // them so, sim/simulator.hpp) and arrive at the max-min rate: the lesser of the two carries its bytes.
  // Raw messages go one at a time at the max-min rate.
  // Its wire rate is what phase_shares gives it (the least over the phases it is in), and its messages are
  // paced at the lesser of that and its even share.
  const bool pipelined = is_pipelined(params.protocol);
  std::map<RankConnection, double> used, wire;
  for (const auto& [c, solved_Bps] : rate)
    used[c] =
        pipelined ? std::min(costs.route_share_Bps(c.from, c.to, c.ir_channel), solved_Bps) : solved_Bps;
  std::set<const sg4::Link*> streamed;
  for (const auto& [from, to] : background)
    for (const sg4::Link* l : flow_route(from, to).shared)
      streamed.insert(l);
  const int lanes = s.params.lanes_per_channel;
  for (const auto& groups : phases) {
    const PhaseShares shares = phase_shares(groups, used, hosts, streamed, lanes);
    // Up flows of one channel and down flows of another may share a link: NCCL's tree layout, a channel pair
    // per NIC, puts each NIC on the parent's side of one pair and the children's side of the next. Each keeps
    // the rate its own pattern gives it, and the NIC's bytes bound the whole (time_compact's busiest-link
    // floor), as in the α-β model; op by op, which paces each connection at its even share, leaves a NIC's
    // share idle while a pipeline waits (docs/simulation.md has the figures).
    if (shares.op_by_op) throw OpByOpNeeded{};
    for (const auto& [c, w] : shares.wire_Bps) {
      auto [it, first] = wire.try_emplace(c, w);
      if (!first) it->second = std::min(it->second, w);
    }
  }
  costs.reshare([&](int a, int b, int channel, double even_Bps) {
    const double w = wire.at(RankConnection{a, b, channel});
    return ConnectionCosts::RouteShare{pipelined ? std::min(even_Bps, w) : w, w};
  });
  CostParams compute = params.compute;
  compute.protocol = params.protocol;
  return time_compact(s, costs, compute);
}

// ---- the child process and its pipe ----

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    p += n, size -= static_cast<std::size_t>(n);
  }
}

template <typename T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T take(const std::string& in, std::size_t& at) {
  if (at + sizeof(T) > in.size()) throw BackendError("simulator: truncated result from the SimGrid process");
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

std::string encode(const RunResult& r) {
  std::string out(1, 'K');
  put(out, static_cast<std::uint64_t>(r.op_times.size()));
  for (std::size_t rank = 0; rank < r.op_times.size(); ++rank) {
    put(out, static_cast<std::uint64_t>(r.op_times[rank].size()));
    for (const OpTiming& t : r.op_times[rank])
      put(out, t.start_s), put(out, t.end_s);
    put(out, r.rank_end_s[rank]);
  }
  put(out, r.total_s);
  return out;
}

RunResult decode(const std::string& in) {
  std::size_t at = 1;
  RunResult r;
  const auto world = take<std::uint64_t>(in, at);
  r.op_times.resize(world);
  r.rank_end_s.resize(world);
  for (std::size_t rank = 0; rank < world; ++rank) {
    const auto ops = take<std::uint64_t>(in, at);
    r.op_times[rank].resize(ops);
    for (auto& t : r.op_times[rank])
      t.start_s = take<double>(in, at), t.end_s = take<double>(in, at);
    r.rank_end_s[rank] = take<double>(in, at);
  }
  r.total_s = take<double>(in, at);
  return r;
}

// A simulation running in a forked child process (SimGrid's state stays there): its pid, the read end of
// the pipe it answers through, and what has come through so far.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string reply;
};

Child start_child(const std::function<RunResult()>& simulation) {
  int fds[2];
  if (::pipe(fds) != 0) throw BackendError(fmt::format("simulator: pipe failed: {}", std::strerror(errno)));
  std::fflush(nullptr);  // what stdio holds would otherwise be written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    throw BackendError(fmt::format("simulator: fork failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string message;
    try {
      message = encode(simulation());
    } catch (const OpByOpNeeded&) {
      message = "O";
    } catch (const std::exception& e) {
      message = std::string("E") + e.what();
    }
    write_all(fds[1], message.data(), message.size());
    ::close(fds[1]);
    _exit(0);
  }
  ::close(fds[1]);
  return Child{pid, fds[0], {}};
}

// Reads what the child has sent; false at the end of its answer.
bool read_some(Child& child) {
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    child.reply.append(buffer, static_cast<std::size_t>(n));
    return true;
  }
}

// The child's result once it has answered in full: reaps it and decodes the answer.
RunResult finish_child(Child& child) {
  ::close(child.fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || child.reply.empty()) {
    throw BackendError(fmt::format("simulator: the SimGrid process failed (status {})", status));
  }
  if (child.reply[0] == 'E') throw BackendError("simulator: " + child.reply.substr(1));
  if (child.reply[0] == 'O') throw OpByOpNeeded{};
  return decode(child.reply);
}

// Runs `simulation` in a forked child and returns its result.
RunResult run_forked(const std::function<RunResult()>& simulation) {
  Child child = start_child(simulation);
  while (read_some(child)) {
  }
  return finish_child(child);
}

// Runs simulations order[0], order[1], ... in forked children, up to `parallel` at once, reading every
// running child's pipe as its answer comes (an op-level answer is megabytes: a child blocks on a full pipe
// until it is read). Outcomes into `out`, by simulation index; the simulations whose child answered
// OpByOpNeeded into `op_by_op` instead, unfinished.
void run_forked_all(const std::vector<std::size_t>& order,
                    const std::function<RunResult(std::size_t)>& simulation, int parallel,
                    const BatchProgress& finished, std::vector<BatchOutcome>& out,
                    std::vector<std::size_t>& op_by_op) {
  std::vector<std::pair<std::size_t, Child>> running;
  std::size_t next = 0;
  while (next < order.size() || !running.empty()) {
    for (; next < order.size() && static_cast<int>(running.size()) < std::max(1, parallel); ++next) {
      const std::size_t i = order[next];
      try {
        running.emplace_back(i, start_child([&, i] { return simulation(i); }));
      } catch (const std::exception& e) {
        out[i].error = e.what();
        if (finished) finished(i);
      }
    }
    std::vector<pollfd> fds;
    for (const auto& [index, child] : running)
      fds.push_back(pollfd{child.fd, POLLIN, 0});
    if (fds.empty()) continue;
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw BackendError(fmt::format("simulator: poll failed: {}", std::strerror(errno)));
    }
    for (std::size_t k = fds.size(); k-- > 0;) {
      if (fds[k].revents == 0) continue;
      auto& [index, child] = running[k];
      if (read_some(child)) continue;
      bool done = true;
      try {
        out[index].result = finish_child(child);
      } catch (const OpByOpNeeded&) {
        op_by_op.push_back(index);
        done = false;
      } catch (const std::exception& e) {
        out[index].error = e.what();
      }
      if (done && finished) finished(index);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
}

void check_fits(const topo::Topology& topology, int world_size) {
  if (static_cast<int>(topology.gpus().size()) < world_size) {
    throw ConfigError(fmt::format("topology '{}' has {} GPUs, the schedule needs {}", topology.name(),
                                  topology.gpus().size(), world_size));
  }
}

}  // namespace

RunResult simulate(const Schedule& schedule, const topo::Topology& topology, const SimParams& params) {
  check_fits(topology, schedule.world_size());
  if (!params.platform_xml_path.empty()) {
    RankPairs pairs = pairs_of(schedule);
    if (params.platform_all_pairs) {
      pairs.clear();
      for (int a = 0; a < schedule.world_size(); ++a)
        for (int b = 0; b < schedule.world_size(); ++b)
          if (a != b) pairs.emplace_back(a, b);
    }
    std::ofstream xml(params.platform_xml_path);
    xml << platform_xml(topology, schedule.world_size(), pairs, params.compute.reduce_Bps);
    if (!xml) throw ConfigError(fmt::format("{}: cannot write the platform", params.platform_xml_path));
  }
  RunResult result = run_forked([&] { return run_in_simgrid(schedule, topology, params); });
  result.bytes_sent = bytes_sent_per_rank(schedule);
  return result;
}

RunResult simulate_compact(const CompactSchedule& schedule, const topo::Topology& topology,
                           const SimParams& params, bool* ran_by_pattern) {
  check_fits(topology, schedule.world_size());
  if (ran_by_pattern) *ran_by_pattern = false;
  if (!simulates_by_pattern(schedule, params)) return simulate(to_explicit(schedule), topology, params);
  try {
    RunResult result = run_forked([&] { return run_patterns(schedule, topology, params); });
    result.bytes_sent = compact_bytes_sent(schedule);
    if (ran_by_pattern) *ran_by_pattern = true;
    return result;
  } catch (const OpByOpNeeded&) {
    return simulate(to_explicit(schedule), topology, params);
  }
}

std::vector<BatchOutcome> simulate_compact_batch(const std::vector<BatchJob>& jobs, int parallel,
                                                 const BatchProgress& finished) {
  for (const BatchJob& job : jobs) {
    CCLAB_ENFORCE(job.params.platform_xml_path.empty(), "a batch of simulations writes no platform file");
    check_fits(*job.topology, job.schedule->world_size());
  }
  // The longest first, so that the last to finish is a short one: op-level simulations by their op count
  // (the events SimGrid handles); a pattern-level one costs a few solves.
  std::vector<std::uint64_t> cost(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const BatchJob& job = jobs[i];
    cost[i] = simulates_by_pattern(*job.schedule, job.params) ? 0 : count_explicit_ops(*job.schedule);
  }
  std::vector<std::size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  // Each child expands its own schedule (op by op), so the expansions run side by side and the parent
  // holds none of them.
  std::vector<BatchOutcome> out(jobs.size());
  std::vector<std::size_t> op_by_op;
  auto op_level = [&](std::size_t i) {
    return run_in_simgrid(to_explicit(*jobs[i].schedule), *jobs[i].topology, jobs[i].params);
  };
  run_forked_all(
      order,
      [&](std::size_t i) {
        const BatchJob& job = jobs[i];
        if (simulates_by_pattern(*job.schedule, job.params))
          return run_patterns(*job.schedule, *job.topology, job.params);
        return op_level(i);
      },
      parallel, finished, out, op_by_op);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    out[i].by_pattern = out[i].result && simulates_by_pattern(*jobs[i].schedule, jobs[i].params);
  // The pattern-level runs that found tree lanes contending (phase_shares), op by op, the longest first.
  std::stable_sort(op_by_op.begin(), op_by_op.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<std::size_t> none;
  run_forked_all(op_by_op, op_level, parallel, finished, out, none);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (out[i].result) out[i].result->bytes_sent = compact_bytes_sent(*jobs[i].schedule);
  return out;
}

}  // namespace cclab::sim
