#include "engine/model/cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>

#include "common/error.hpp"
#include "engine/ir/progress.hpp"
#include "engine/model/switch_ports.hpp"
#include "engine/model/walk.hpp"

namespace cclab {
namespace {

// Start times per the IR, shared by the cost model and the step counter.
class Timeline : public ProgressHooks {
 public:
  Timeline(const Schedule& s, const WalkFrame& frame)
      : s_(s), frame_(frame), channel_last_start_(s.spec.world_size) {
    result_.op_times.resize(s.spec.world_size);
    const int channels = std::max(1, s.num_channels());
    for (int r = 0; r < s.spec.world_size; ++r) {
      result_.op_times[r].assign(s.ranks[r].ops.size(), OpTiming{});
      // No op starts before its rank's previous phase ended: the channels start there.
      channel_last_start_[r].assign(channels, frame.ready_s.empty() ? 0.0 : frame.ready_s[r]);
    }
  }

  void on_start(int rank, OpId id) override {
    const Program& p = s_.ranks[rank];
    const Op& op = p.ops[id];
    double t = channel_last_start_[rank][op.channel];
    for (OpId d : p.deps_of(op))
      t = std::max(t, result_.op_times[rank][d].end_s);
    result_.op_times[rank][id].start_s = t;
    channel_last_start_[rank][op.channel] = t;
  }

  RunResult finish() {
    const int world = s_.spec.world_size;
    result_.rank_end_s.assign(world, 0.0);
    for (int r = 0; r < world; ++r) {
      for (const OpTiming& t : result_.op_times[r])
        result_.rank_end_s[r] = std::max(result_.rank_end_s[r], t.end_s);
      result_.total_s = std::max(result_.total_s, result_.rank_end_s[r]);
    }
    result_.bytes_sent = bytes_sent_per_rank(s_);
    return std::move(result_);
  }

 protected:
  int global(int member) const { return frame_.global_rank.empty() ? member : frame_.global_rank[member]; }

  const Schedule& s_;
  WalkFrame frame_;
  RunResult result_;
  std::vector<std::vector<double>> channel_last_start_;
};

class AlphaBetaTimeline final : public Timeline {
 public:
  AlphaBetaTimeline(const Schedule& s, const WalkFrame& frame, const ConnectionCosts& costs,
                    const CostParams& params)
      : Timeline(s, frame),
        costs_(costs),
        params_(params),
        elem_bytes_(static_cast<double>(dtype_size_bytes(s.spec.dtype))),
        core_free_(params.one_core_per_rank ? static_cast<std::size_t>(s.spec.world_size) : 0, 0.0) {}

  void on_local(int rank, OpId id) override {
    const Op& op = s_.ranks[rank].ops[id];
    OpTiming& t = result_.op_times[rank][id];
    const double rate = op.kind == OpKind::Copy ? params_.copy_Bps : params_.reduce_Bps;
    t.end_s = core_free(rank, t.start_s) + (rate > 0 ? op.count() * elem_bytes_ / rate : 0.0);
    if (params_.one_core_per_rank) core_free_[rank] = t.end_s;
  }

  // An instance starts when its last member has started and ends on all members at once, when every
  // member's port has carried its bytes each way (a port's direction carries one instance of its channel at a
  // time, so a channel's reduce of one round overlaps the store of the previous one, which uses the other
  // direction most) and the data has crossed the switch.
  void on_switch(std::span<const OpRef> members) override {
    const Op& first = s_.ranks[members[0].rank].ops[members[0].op];
    const bool reduce = first.kind == OpKind::SwitchReduce;
    double begin = 0;
    InstanceElems instance;
    for (const OpRef& m : members) {
      begin = std::max(begin, result_.op_times[m.rank][m.op].start_s);
      instance.add(instance_chunk(s_.ranks[m.rank].ops[m.op]));
    }
    const double all_bytes = static_cast<double>(instance.total()) * elem_bytes_;
    double end = begin;
    for (const OpRef& m : members) {
      const ConnectionCosts::SwitchPort& port = costs_.switch_port(global(m.rank), first.channel);
      const double own = s_.ranks[m.rank].ops[m.op].count() * elem_bytes_;
      PortFree& free = port_free_s_[ConnectionCosts::port_key(m.rank, first.channel)];
      double& up_free = free.up_s;
      double& down_free = free.down_s;
      up_free = std::max(begin, up_free) + (reduce ? all_bytes : own) / port.up_Bps;
      down_free = std::max(begin, down_free) + (reduce ? own : all_bytes) / port.down_Bps;
      end = std::max(end, std::max(up_free, down_free) + port.latency_s);
    }
    for (const OpRef& m : members)
      result_.op_times[m.rank][m.op].end_s = end;
  }

  void on_transfer(int a, OpId send_id, int b, OpId recv_id) override {
    const Op& send = s_.ranks[a].ops[send_id];
    const Op& recv = s_.ranks[b].ops[recv_id];
    const ConnectionCost& conn = costs_.at(global(a), global(b), send.channel);
    double& free_s = free_s_[ConnectionCosts::connection_key(a, b, send.channel)];
    OpTiming& ts = result_.op_times[a][send_id];
    OpTiming& tr = result_.op_times[b][recv_id];
    const double bytes = send.src.count * elem_bytes_;
    // The receive completes when the data has arrived and the receiver has reached the op; with one core per
    // rank the copy also waits for the receiver's core.
    const bool pipelined = costs_.pipelined() && !params_.one_core_per_rank;
    double wire_begin = 0;
    const double arrival =
        deliver(conn, pipelined, ts.start_s, core_free(b, tr.start_s), bytes, free_s, &wire_begin);
    ts.end_s = arrival;
    double end = std::max(arrival, tr.start_s);
    if (recv.kind == OpKind::RecvReduce && params_.reduce_Bps > 0)
      end = reduced_end(pipelined, wire_begin, tr.start_s, end, bytes / params_.reduce_Bps,
                        reduce_free_s_[ConnectionCosts::connection_key(a, b, send.channel)]);
    tr.end_s = end;
    if (params_.one_core_per_rank) core_free_[b] = end;
  }

 private:
  // When rank's core can take up work that is ready at `ready_s` (one_core_per_rank; else ready_s).
  double core_free(int rank, double ready_s) const {
    return params_.one_core_per_rank ? std::max(ready_s, core_free_[rank]) : ready_s;
  }

  const ConnectionCosts& costs_;
  CostParams params_;
  double elem_bytes_;
  std::unordered_map<std::uint64_t, double> free_s_;
  std::unordered_map<std::uint64_t, double> reduce_free_s_;  // per connection: its last reduction's end
  struct PortFree {
    double up_s = 0, down_s = 0;
  };
  std::unordered_map<std::uint64_t, PortFree> port_free_s_;  // a member's switch port per channel
  std::vector<double> core_free_;  // one_core_per_rank: when each rank's core is free again
};

class StepTimeline final : public Timeline {
 public:
  using Timeline::Timeline;
  void on_local(int rank, OpId id) override {
    result_.op_times[rank][id].end_s = result_.op_times[rank][id].start_s;
  }
  void on_transfer(int a, OpId send_id, int b, OpId recv_id) override {
    OpTiming& ts = result_.op_times[a][send_id];
    OpTiming& tr = result_.op_times[b][recv_id];
    ts.end_s = tr.end_s = std::max(ts.start_s, tr.start_s) + 1;
  }
  void on_switch(std::span<const OpRef> members) override {
    double begin = 0;
    for (const OpRef& m : members)
      begin = std::max(begin, result_.op_times[m.rank][m.op].start_s);
    for (const OpRef& m : members)
      result_.op_times[m.rank][m.op].end_s = begin + 1;
  }
};

void require_walk(const Schedule& s, ProgressHooks& hooks) {
  Matching matching;
  if (auto e = check_structure(s, matching)) throw PlanError(*e);
  if (auto e = walk_schedule(s, matching, hooks)) throw PlanError(*e);
}

}  // namespace

void add_connections(const Schedule& s, ConnectionCosts& costs, const WalkFrame& frame) {
  auto global = [&](int r) { return frame.global_rank.empty() ? r : frame.global_rank[r]; };
  const std::uint64_t elem = dtype_size_bytes(s.spec.dtype);
  for (int a = 0; a < s.spec.world_size; ++a)
    for (const Op& op : s.ranks[a].ops)
      if (op.kind == OpKind::Send) costs.add(global(a), global(op.peer), op.channel, op.src.count * elem);
  add_switch_ports(s, costs, frame);
}

void add_switch_ports(const Schedule& s, ConnectionCosts& costs, const WalkFrame& frame) {
  auto global = [&](int r) { return frame.global_rank.empty() ? r : frame.global_rank[r]; };
  const std::uint64_t elem = dtype_size_bytes(s.spec.dtype);
  const SwitchGroups groups = switch_groups(s);
  if (groups.empty()) return;
  const auto instance_elems = switch_instance_elems(s, groups);
  const std::unordered_set<std::uint64_t> in_network =
      in_network_groups(groups, costs.topology(), frame.global_rank);
  for (int r = 0; r < s.spec.world_size; ++r) {
    for (std::size_t i = 0; i < instance_elems[r].size(); ++i) {
      const Op& op = s.ranks[r].ops[i];
      if (!is_switch(op.kind)) continue;
      const std::uint64_t all = instance_elems[r][i] * elem, own = op.count() * elem;
      const bool reduce = op.kind == OpKind::SwitchReduce;
      costs.add_switch(global(r), op.channel, reduce ? all : own, reduce ? own : all,
                       in_network.contains(group_key(op)));
    }
  }
}

RunResult walk_alpha_beta(const Schedule& s, const ConnectionCosts& costs, const CostParams& params,
                          const WalkFrame& frame) {
  AlphaBetaTimeline timeline(s, frame, costs, params);
  require_walk(s, timeline);
  return timeline.finish();
}

RunResult walk_steps(const Schedule& s, const WalkFrame& frame) {
  StepTimeline timeline(s, frame);
  require_walk(s, timeline);
  return timeline.finish();
}

std::vector<Protocol> protocols_to_cost(Protocol requested, bool crosses_pcie, AlgorithmFamily family,
                                        unsigned allowed) {
  if (requested != Protocol::Auto) return {requested};
  if (!family_runs(family, Protocol::LL)) return {Protocol::Simple};
  std::vector<Protocol> out;
  for (Protocol p : kNcclProtocols)
    if (family_runs(family, p) && (allowed & protocol_bit(p)) &&
        protocol_unavailable(p, crosses_pcie).empty())
      out.push_back(p);
  if (out.empty()) out.push_back(Protocol::Simple);  // NCCL keeps Simple where nothing else runs
  return out;
}

std::vector<Protocol> protocols_for(const ConnectionCosts& costs, const CostParams& params) {
  if (params.protocol != Protocol::Auto || costs.family() != AlgorithmFamily::P2p)
    return protocols_to_cost(params.protocol, costs.crosses_pcie(), costs.family(), params.auto_protocols);
  const ConnectionCosts::Transfer t = costs.largest_transfer();
  Protocol p = nccl_p2p_protocol(t.bytes, costs.nodes(), !costs.crosses_pcie(), t.channels);
  if (!(params.auto_protocols & protocol_bit(p)))
    p = p == Protocol::LL && (params.auto_protocols & protocol_bit(Protocol::Simple))   ? Protocol::Simple
        : p == Protocol::Simple && (params.auto_protocols & protocol_bit(Protocol::LL)) ? Protocol::LL
                                                                                        : Protocol::Simple;
  return {p};
}

ProtocolRun cheapest(std::vector<ProtocolRun> runs) {
  CCLAB_ENFORCE(!runs.empty(), "no protocol was costed");
  std::size_t best = 0;
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (runs[i].run.total_s < runs[best].run.total_s) best = i;
  return std::move(runs[best]);
}

std::vector<ProtocolRun> estimate_cost_by_protocol(const Schedule& schedule, const topo::Topology& topology,
                                                   const CostParams& params) {
  if (static_cast<int>(topology.gpus().size()) < schedule.spec.world_size) {
    throw ConfigError(fmt::format("topology '{}' has {} GPUs, the schedule needs {}", topology.name(),
                                  topology.gpus().size(), schedule.spec.world_size));
  }
  ConnectionCosts costs(topology, schedule.lanes_per_channel,
                        algorithm_family(schedule.spec.collective, schedule.algorithm), schedule.spec.bytes(),
                        schedule.spec.world_size);
  add_connections(schedule, costs);
  costs.finish();
  // One core per rank: a "link" between CPU ranks is the receiving core copying the message, and that core
  // already takes its receives one at a time (the walk's core_free). Splitting the link among the lanes that
  // cross it as well would count the same sharing twice: a 2-rank double binary tree, whose two trees cross
  // each direction of the one link, came out at twice the ring's time where the machine runs them alike.
  if (params.one_core_per_rank) {
    costs.reshare([&](int from, int to, int, double even_Bps) {
      const double share_Bps =
          from == to ? even_Bps : topology.route_between_ranks(from, to).bottleneck_bandwidth_Bps;
      return ConnectionCosts::RouteShare{share_Bps, share_Bps};
    });
  }
  const CostParams rates = per_channel_rates(params, schedule.num_network_channels());
  std::vector<ProtocolRun> runs;
  for (Protocol p : protocols_for(costs, params)) {
    costs.use_protocol(p);
    // The launches delay every rank's first op.
    const std::vector<double> launch(schedule.spec.world_size, costs.launches_s(schedule.kernels));
    runs.push_back({p, walk_alpha_beta(schedule, costs, rates, WalkFrame{{}, launch})});
    runs.back().run.total_s = std::max(runs.back().run.total_s, costs.link_floor_s(schedule.kernels));
  }
  return runs;
}

RunResult estimate_cost(const Schedule& schedule, const topo::Topology& topology, const CostParams& params) {
  return cheapest(estimate_cost_by_protocol(schedule, topology, params)).run;
}

int count_steps(const Schedule& schedule) {
  return static_cast<int>(walk_steps(schedule).total_s);
}

}  // namespace cclab
