#include "engine/cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "common/error.hpp"
#include "engine/progress.hpp"

namespace cclab {
namespace {

std::uint64_t connection_key(int a, int b, int channel) {
  return (static_cast<std::uint64_t>(a) << 40) | (static_cast<std::uint64_t>(b) << 16) |
         static_cast<std::uint64_t>(channel);
}

// Start times per the IR, shared by the cost model and the step counter.
class Timeline : public ProgressHooks {
 public:
  explicit Timeline(const Schedule& s) : s_(s), channel_last_start_(s.spec.world_size) {
    result_.op_times.resize(s.spec.world_size);
    const int channels = std::max(1, s.num_channels());
    for (int r = 0; r < s.spec.world_size; ++r) {
      result_.op_times[r].assign(s.ranks[r].ops.size(), OpTiming{});
      channel_last_start_[r].assign(channels, 0.0);
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
  const Schedule& s_;
  RunResult result_;
  std::vector<std::vector<double>> channel_last_start_;
};

class AlphaBetaTimeline final : public Timeline {
 public:
  AlphaBetaTimeline(const Schedule& s, const topo::Topology& t, const CostParams& params)
      : Timeline(s), params_(params), elem_bytes_(static_cast<double>(dtype_size_bytes(s.spec.dtype))) {
    // Static link sharing: how many channels have a connection routed over each directed link. Channels run
    // concurrently and split a link; the phases of one channel (a ring's reduce-scatter and allgather, the
    // steps of halving-doubling) follow each other and do not.
    // A planner may run each channel as several IR lanes (tree: up and down); lanes of one channel count
    // once.
    const auto lanes_param = s.params.find("lanes");
    const int lanes = lanes_param == s.params.end() ? 1 : std::max(1, std::stoi(lanes_param->second));
    std::unordered_map<std::size_t, std::unordered_set<int>> channels_on_link;
    for (int a = 0; a < s.spec.world_size; ++a) {
      for (const Op& op : s.ranks[a].ops) {
        if (op.kind != OpKind::Send) continue;
        auto [it, fresh] = connections_.try_emplace(connection_key(a, op.peer, op.channel));
        if (!fresh) continue;
        auto route = routes_.find(pair_key(a, op.peer));
        if (route == routes_.end())
          route = routes_.emplace(pair_key(a, op.peer), t.route_between_ranks(a, op.peer)).first;
        it->second.route = &route->second;
        for (const topo::Hop& h : route->second.hops)
          channels_on_link[h.directed_id()].insert(op.channel / lanes);
      }
    }
    for (auto& [key, conn] : connections_) {
      conn.bandwidth_Bps = std::numeric_limits<double>::infinity();
      for (const topo::Hop& h : conn.route->hops) {
        const double share = static_cast<double>(channels_on_link[h.directed_id()].size());
        conn.bandwidth_Bps = std::min(conn.bandwidth_Bps, t.effective_bandwidth_Bps(h.link) / share);
      }
    }
  }

  void on_local(int rank, OpId id) override {
    const Op& op = s_.ranks[rank].ops[id];
    OpTiming& t = result_.op_times[rank][id];
    const double rate = op.kind == OpKind::Copy ? params_.copy_Bps : params_.reduce_Bps;
    t.end_s = t.start_s + (rate > 0 ? op.count() * elem_bytes_ / rate : 0.0);
  }

  void on_transfer(int a, OpId send_id, int b, OpId recv_id) override {
    const Op& send = s_.ranks[a].ops[send_id];
    const Op& recv = s_.ranks[b].ops[recv_id];
    Connection& conn = connections_.at(connection_key(a, b, send.channel));
    OpTiming& ts = result_.op_times[a][send_id];
    OpTiming& tr = result_.op_times[b][recv_id];
    const double bytes = send.src.count * elem_bytes_;
    const double begin = std::max({ts.start_s, tr.start_s, conn.free_s});
    const double wire_s = std::isinf(conn.bandwidth_Bps) ? 0.0 : bytes / conn.bandwidth_Bps;
    double end = begin + conn.route->latency_s + wire_s;
    conn.free_s = end;
    ts.end_s = end;
    if (recv.kind == OpKind::RecvReduce && params_.reduce_Bps > 0) end += bytes / params_.reduce_Bps;
    tr.end_s = end;
  }

 private:
  static std::uint64_t pair_key(int a, int b) {
    return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
  }
  struct Connection {
    const topo::Route* route = nullptr;
    double bandwidth_Bps = 0;
    double free_s = 0;
  };
  CostParams params_;
  double elem_bytes_;
  std::unordered_map<std::uint64_t, topo::Route> routes_;
  std::unordered_map<std::uint64_t, Connection> connections_;
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
};

void require_walk(const Schedule& s, ProgressHooks& hooks) {
  Matching matching;
  if (auto e = check_structure(s, matching)) throw PlanError(*e);
  if (auto e = walk_schedule(s, matching, hooks)) throw PlanError(*e);
}

}  // namespace

RunResult estimate_cost(const Schedule& schedule, const topo::Topology& topology, const CostParams& params) {
  if (static_cast<int>(topology.gpus().size()) < schedule.spec.world_size) {
    throw ConfigError(fmt::format("topology '{}' has {} GPUs, the schedule needs {}", topology.name(),
                                  topology.gpus().size(), schedule.spec.world_size));
  }
  AlphaBetaTimeline timeline(schedule, topology, params);
  require_walk(schedule, timeline);
  return timeline.finish();
}

int count_steps(const Schedule& schedule) {
  StepTimeline timeline(schedule);
  require_walk(schedule, timeline);
  return static_cast<int>(timeline.finish().total_s);
}

}  // namespace cclab
