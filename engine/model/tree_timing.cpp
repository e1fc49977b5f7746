// The tree pass's timing without its expansion. Each channel c of a tree pass runs two IR channels: 2c
// reduces up the tree, 2c+1 broadcasts down it, and channels share nothing (their own connections, their
// own ops), so each is timed alone. On one member, in the expansion's program order (engine/ir/tree_pass.cpp
// with engine/ir/pipeline.hpp's post-ahead of kPostAhead chunks):
//   up:   for t = 0 .. K+7: [t < K]  R_0(t) R_1(t) .. R_{n-1}(t) L_1(t) .. L_{n-1}(t)   (receives from the n
//                                    children, the first one reducing; local reductions of the others)
//                          [t >= 8] S(t-8)                                               (send to the parent)
//   down: for t = 0 .. K+7: [t < K]  D(t), or a copy on a one-member tree                 (receive from the
//   parent)
//                          [t >= 8] F_0(t-8) .. F_{n-1}(t-8)                             (send to each child)
// An op starts once the op before it on its IR channel has started and its deps have completed (L_j after
// the reduction so far and R_j; S(k) after the member's reduction of chunk k; D(k) after S(k); F_j(k) after
// the member has chunk k), and a matched send and receive complete by the α-β rules of engine/model/cost.cpp,
// with the same arithmetic, so both give the same doubles. The members progress as a worklist: one advances
// until an op waits for a transfer, and a transfer is timed once both its ops have started, in message order
// per connection. State is O(members · chunks) per channel, where the walk of the expansion needs O(ops).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "engine/ir/pipeline.hpp"
#include "engine/model/pass_timing.hpp"

namespace cclab {
namespace {

// Per (member, chunk) of one channel: the edge's four times, the reduction's end, the up arrivals kept.
constexpr std::uint64_t kTreeBytesPerCell = 6 * sizeof(double);
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
bool known(double t) {
  return !std::isnan(t);
}

// One connection per tree edge and direction: the k-th message's two ops' starts, the receive's end, the
// send's end (the arrival), indexed [child member · K + k] (each member has at most one parent).
struct EdgeTimes {
  std::vector<double> send_start, recv_start, recv_end, send_end;
  std::vector<int> next;  // per child member: the first message not yet timed
  void reset(std::size_t members) {
    for (auto* v : {&send_start, &recv_start, &recv_end, &send_end})
      std::fill(v->begin(), v->end(), kUnknown);
    next.assign(members, 0);
  }
};

class TreeChannelTimer {
 public:
  TreeChannelTimer(const TreePass& pass, std::span<const int> global_rank, std::span<const double> ready_s,
                   const PassTimingModel& m)
      : pass_(pass),
        global_rank_(global_rank),
        m_(m),
        P_(pass.members()),
        K_(pass.rounds()),
        ready_(ready_s),
        elems_(K_) {
    // Sized once for every channel: reassigning buffers of this size would page them in again each time.
    const std::size_t cells = static_cast<std::size_t>(P_) * K_;
    for (auto* v : {&edge_.send_start, &edge_.recv_start, &edge_.recv_end, &edge_.send_end, &reduced_end_,
                    &up_send_end_})
      v->resize(cells);
  }

  // Member end times over channel c's ops (at least the ready times).
  std::vector<double> run(int channel) {
    tree_ = &pass_.trees[channel];
    up_ = 2 * channel;
    down_ = up_ + 1;
    const ElemRange slice = partition(pass_.count, pass_.channels(), channel);
    for (int k = 0; k < K_; ++k)
      elems_[k] = static_cast<double>(partition(slice, K_, k).count);
    std::fill(reduced_end_.begin(), reduced_end_.end(), kUnknown);
    member_end_.assign(ready_.begin(), ready_.end());
    if (!unit_steps()) {
      up_cost_.resize(P_);
      down_cost_.resize(P_);
      for (int x = 0; x < P_; ++x) {
        const int p = tree_->parent[x];
        if (p < 0) continue;
        up_cost_[x] = m_.costs->at(global_rank_[x], global_rank_[p], up_);
        down_cost_[x] = m_.costs->at(global_rank_[p], global_rank_[x], down_);
      }
    }
    edge_.reset(P_);
    run_direction(true);
    // The broadcast reuses the edge arrays; the up direction's arrivals are what D(k) waits for.
    std::swap(up_send_end_, edge_.send_end);
    edge_.reset(P_);
    run_direction(false);
    return member_end_;
  }

 private:
  bool unit_steps() const { return m_.costs == nullptr; }
  std::size_t at(int member, int k) const { return static_cast<std::size_t>(member) * K_ + k; }
  double bytes(int k) const { return elems_[k] * m_.elem_bytes; }
  double local_s(int k, double rate) const {
    if (unit_steps()) return 0.0;
    return rate > 0 ? elems_[k] * m_.elem_bytes / rate : 0.0;
  }
  void note_end(int member, double t) { member_end_[member] = std::max(member_end_[member], t); }

  // A member's cursor in its program on one IR channel: round t (0 .. K+7) and the op within the round.
  struct Cursor {
    int t = 0, op = 0;
    double last_start = 0;
    double partial_end = kUnknown;  // up: the reduction of the current round's chunk so far
    bool queued = false;
  };

  void run_direction(bool up) {
    cursor_.assign(P_, Cursor{});
    (up ? up_free_ : down_free_).assign(P_, 0.0);
    work_.clear();
    for (int x = P_ - 1; x >= 0; --x) {
      cursor_[x].last_start = ready_[x];
      cursor_[x].queued = true;
      work_.push_back(x);
    }
    while (!work_.empty()) {
      const int x = work_.back();
      work_.pop_back();
      cursor_[x].queued = false;
      up ? advance_up(x) : advance_down(x);
    }
    for (int x = 0; x < P_; ++x)
      if (cursor_[x].t < K_ + kPostAhead)
        throw PlanError(
            fmt::format("tree pass timing stalled at member {} (round {}): a planner bug", x, cursor_[x].t));
  }

  void wake(int x) {
    if (!cursor_[x].queued) cursor_[x].queued = true, work_.push_back(x);
  }

  // Times the messages of `child`'s connection whose two ops have started, in order.
  void try_transfers(int child, bool up) {
    const std::vector<ConnectionCost>& cost = up ? up_cost_ : down_cost_;
    int& k = edge_.next[child];
    for (; k < K_; ++k) {
      const std::size_t i = at(child, k);
      const double ss = edge_.send_start[i], rs = edge_.recv_start[i];
      if (!known(ss) || !known(rs)) return;
      double arrival, recv_end;
      if (unit_steps()) {
        arrival = recv_end = std::max(ss, rs) + 1;
      } else {
        const ConnectionCost& conn = cost[child];
        double& free_s = up ? up_free_[child] : down_free_[child];
        const bool pipelined = m_.costs->pipelined();
        const double begin = pipelined ? std::max(ss, free_s) : std::max({ss, rs, free_s});
        const double b = bytes(k);
        const double wire_s = std::isinf(conn.bandwidth_Bps) ? 0.0 : b / conn.bandwidth_Bps;
        arrival = begin + conn.latency_s + wire_s;
        free_s = pipelined ? begin + wire_s : arrival;
        recv_end = std::max(arrival, rs);
        // The first child's receive reduces on arrival (a RecvReduce).
        const bool reduces = up && tree_->children[tree_->parent[child]].front() == child;
        if (reduces && m_.params.reduce_Bps > 0) recv_end += b / m_.params.reduce_Bps;
      }
      edge_.send_end[i] = arrival;
      edge_.recv_end[i] = recv_end;
      const int sender = up ? child : tree_->parent[child], receiver = up ? tree_->parent[child] : child;
      // A member with one child has reduced chunk k when that child's receive-reduce has completed.
      if (up && tree_->children[receiver].size() == 1) reduced_end_[at(receiver, k)] = recv_end;
      note_end(sender, arrival);
      note_end(receiver, recv_end);
      wake(receiver);
    }
  }

  // Starts an op at max(the channel's last start, `deps_end`) and returns its start.
  static double start(Cursor& c, double deps_end) {
    c.last_start = std::max(c.last_start, deps_end);
    return c.last_start;
  }
  // Moves to the next op; past the round's last op, to the next round.
  void next_op(Cursor& c, int ops_in_round) {
    if (++c.op >= ops_in_round) c.op = 0, ++c.t;
  }

  void advance_up(int x) {
    Cursor& c = cursor_[x];
    const auto& children = tree_->children[x];
    const int n = static_cast<int>(children.size()), parent = tree_->parent[x];
    while (c.t < K_ + kPostAhead) {
      const bool posts = c.t < K_, finishes = c.t >= kPostAhead && parent >= 0;
      const int post_ops = posts && n > 0 ? 2 * n - 1 : 0;
      const int ops_in_round = post_ops + (finishes ? 1 : 0);
      if (ops_in_round == 0) {
        ++c.t;
        continue;
      }
      if (c.op < n && posts) {  // R_j(t): starts with nothing to wait for
        const int child = children[c.op];
        edge_.recv_start[at(child, c.t)] = start(c, -std::numeric_limits<double>::infinity());
        try_transfers(child, true);
      } else if (c.op < post_ops) {  // L_j(t), j = op - n + 1
        const int j = c.op - n + 1, k = c.t;
        const double so_far = j == 1 ? edge_.recv_end[at(children[0], k)] : c.partial_end;
        const double got = edge_.recv_end[at(children[j], k)];
        if (!known(so_far) || !known(got)) return;  // a transfer wakes it
        const double s = start(c, std::max(so_far, got));
        c.partial_end = s + local_s(k, m_.params.reduce_Bps);
        note_end(x, c.partial_end);
        if (j == n - 1) reduced_end_[at(x, k)] = c.partial_end;
      } else {  // S(t - 8)
        const int k = c.t - kPostAhead;
        double deps = -std::numeric_limits<double>::infinity();
        if (n > 0) {
          deps = reduced_end_[at(x, k)];
          if (!known(deps)) return;
        }
        edge_.send_start[at(x, k)] = start(c, deps);
        try_transfers(x, true);
      }
      next_op(c, ops_in_round);
    }
  }

  // When member x has chunk k to send down (it has children): its receive from the parent, or at the root its
  // reduction. Unknown until then.
  double have_end(int x, int k) const {
    return tree_->parent[x] >= 0 ? edge_.recv_end[at(x, k)] : reduced_end_[at(x, k)];
  }

  void advance_down(int x) {
    Cursor& c = cursor_[x];
    const auto& children = tree_->children[x];
    const int n = static_cast<int>(children.size()), parent = tree_->parent[x];
    const bool lone = parent < 0 && n == 0;
    while (c.t < K_ + kPostAhead) {
      const int post_ops = c.t < K_ && (parent >= 0 || lone) ? 1 : 0;
      const int ops_in_round = post_ops + (c.t >= kPostAhead ? n : 0);
      if (ops_in_round == 0) {
        ++c.t;
        continue;
      }
      if (c.op < post_ops) {
        const int k = c.t;
        if (lone) {  // a one-member tree copies its input to its output
          note_end(x, start(c, -std::numeric_limits<double>::infinity()) + local_s(k, m_.params.copy_Bps));
        } else {  // D(k): after the member's own send up of chunk k
          edge_.recv_start[at(x, k)] = start(c, up_send_end_[at(x, k)]);
          try_transfers(x, false);
        }
      } else {  // F_j(t - 8)
        const int k = c.t - kPostAhead, child = children[c.op - post_ops];
        const double have = have_end(x, k);
        if (!known(have)) return;
        edge_.send_start[at(child, k)] = start(c, have);
        try_transfers(child, false);
      }
      next_op(c, ops_in_round);
    }
  }

 private:
  const TreePass& pass_;
  std::span<const int> global_rank_;
  const PassTimingModel& m_;
  const int P_, K_;
  const Tree* tree_ = nullptr;
  int up_ = 0, down_ = 1;
  std::span<const double> ready_;
  std::vector<double> elems_;
  EdgeTimes edge_;
  std::vector<double> reduced_end_, up_send_end_, member_end_;
  std::vector<ConnectionCost> up_cost_, down_cost_;
  std::vector<double> up_free_, down_free_;
  std::vector<Cursor> cursor_;
  std::vector<int> work_;
};

}  // namespace

std::vector<double> time_tree_pass(const TreePass& pass, std::span<const int> global_rank,
                                   std::span<const double> ready_s, const PassTimingModel& model) {
  const std::uint64_t cells = static_cast<std::uint64_t>(pass.members()) * pass.rounds();
  require_within_memory_budget(
      cells * kTreeBytesPerCell,
      fmt::format("the α-β recurrence of a {}-member tree pass ({} chunks per channel)", pass.members(),
                  pass.rounds()),
      "use a larger --chunk");
  std::vector<double> end(ready_s.begin(), ready_s.end());
  TreeChannelTimer timer(pass, global_rank, ready_s, model);
  for (int c = 0; c < pass.channels(); ++c) {
    const std::vector<double> channel_end = timer.run(c);
    for (std::size_t x = 0; x < end.size(); ++x)
      end[x] = std::max(end[x], channel_end[x]);
  }
  return end;
}

}  // namespace cclab
