// The tree pass's timing without its expansion. Each channel c of a tree pass runs two IR channels: 2c
// reduces up the tree, 2c+1 broadcasts down it, and channels share nothing (their own connections, their
// own ops), so each is timed alone. On one member, in the expansion's program order (engine/ir/tree_pass.cpp
// with engine/ir/pipeline.hpp's post-ahead of kPostAhead chunks):
//   up, for t = 0 .. K+7:
//     t < K:  R_0(t) .. R_{n-1}(t), L_1(t) .. L_{n-1}(t)  receives from the n children (the first reduces on
//                                                         arrival), then local reductions of the others
//     t >= 8: S(t-8)                                      send to the parent
//   down, for t = 0 .. K+7:
//     t < K:  D(t)                                        receive from the parent (a copy on a lone member)
//     t >= 8: F_0(t-8) .. F_{n-1}(t-8)                    send to each child
// An op starts once the op before it on its IR channel has started and its deps have completed (L_j after
// the reduction so far and R_j; S(k) after the member's reduction of chunk k; D(k) after S(k); F_j(k) after
// the member has chunk k), and a matched send and receive complete by the α-β rules of engine/model/cost.cpp,
// with the same arithmetic, so both give the same doubles. The members progress as a worklist: one advances
// until an op waits for a transfer, and a transfer is timed once both its ops have started, in message order
// per connection. State is O(members · chunks) per channel, where the walk of the expansion needs O(ops).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <optional>

#include <fmt/format.h>
#include <sys/mman.h>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "engine/ir/pipeline.hpp"
#include "engine/model/pass_timing.hpp"

namespace cclab {
namespace {

// Per (member, chunk) of one channel: the edge's four times, the reduction's end, the up arrivals kept.
constexpr std::uint64_t kTreeBytesPerCell = 6 * sizeof(double);

// A table of times that is never read before it is written: allocated without zeroing, in transparent huge
// pages where the kernel offers them on request (paging in 100 MB of 4 KiB pages took as long as two runs of
// a 16,384-member pass).
class Times {
 public:
  void fit(std::size_t n) {
    if (n <= size_) return;
    constexpr std::size_t kHugePage = std::size_t{2} << 20;
    const std::size_t bytes = (n * sizeof(double) + kHugePage - 1) / kHugePage * kHugePage;
    data_.reset(static_cast<double*>(std::aligned_alloc(kHugePage, bytes)));
    if (!data_) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(data_.get(), bytes, MADV_HUGEPAGE);  // advice only: without it, ordinary pages
#endif
    size_ = n;
  }
  double& operator[](std::size_t i) {
    return data_[i];
  }
  double operator[](std::size_t i) const {
    return data_[i];
  }
  void swap(Times& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }

 private:
  struct Free {
    void operator()(double* p) const { std::free(p); }
  };
  std::unique_ptr<double[], Free> data_;
  std::size_t size_ = 0;
};

// One connection per tree edge and direction: the k-th message's two ops' starts, the receive's end, the
// send's end (the arrival), indexed [child member · K + k] (each member has at most one parent). Ops start in
// order, so counters say what is known: message k's send has started when k < sends[child], and it has been
// timed when k < timed[child]; nothing is read before it is written, so the tables need no clearing.
struct EdgeTimes {
  Times send_start, recv_start, recv_end, send_end;
  std::vector<int> sends, recvs, timed;  // per child member
  void reset(std::size_t members) {
    sends.assign(members, 0);
    recvs.assign(members, 0);
    timed.assign(members, 0);
  }
};

// The tables, kept per thread from one pass to the next: paging in a fresh 100 MB for each of the four runs
// of a 16,384-member pass (the step count, three protocols) cost more than the recurrence.
struct TreeScratch {
  EdgeTimes edge;
  Times reduced_end, up_send_end;
};

class TreeChannelTimer {
 public:
  TreeChannelTimer(const TreePass& pass, std::span<const int> global_rank, std::span<const double> ready_s,
                   const PassTimingModel& m, TreeScratch& scratch)
      : pass_(pass),
        global_rank_(global_rank),
        m_(m),
        P_(pass.members()),
        K_(pass.rounds()),
        ready_(ready_s),
        elems_(K_),
        edge_(scratch.edge),
        reduced_end_(scratch.reduced_end),
        up_send_end_(scratch.up_send_end) {
    const std::size_t cells = static_cast<std::size_t>(P_) * K_;
    for (auto* v : {&edge_.send_start, &edge_.recv_start, &edge_.recv_end, &edge_.send_end, &reduced_end_,
                    &up_send_end_})
      v->fit(cells);
  }

  // Member end times over channel c's ops (at least the ready times); `order` lists the members breadth first
  // from the root.
  std::vector<double> run(int channel, const std::vector<int>& order) {
    tree_ = &pass_.trees[channel];
    up_ = 2 * channel;
    down_ = up_ + 1;
    const ElemRange slice = partition(pass_.count, pass_.channels(), channel);
    for (int k = 0; k < K_; ++k)
      elems_[k] = static_cast<double>(partition(slice, K_, k).count);
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
    run_direction(true, order);
    // The broadcast reuses the edge arrays; the up direction's arrivals are what D(k) waits for.
    up_send_end_.swap(edge_.send_end);
    edge_.reset(P_);
    run_direction(false, order);
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
    double partial_end = 0;  // up: the reduction of the current round's chunk so far
    bool queued = false;
  };

  // Up, a member's ops wait only for its children's transfers, and down only for its parent's: taken leaves
  // first going up and root first going down, every member runs to its end in one go (the worklist only
  // catches what that order leaves, so any order gives the same times).
  void run_direction(bool up, const std::vector<int>& order) {
    cursor_.assign(P_, Cursor{});
    (up ? up_free_ : down_free_).assign(P_, 0.0);
    if (up) reduce_free_.assign(P_, 0.0);
    work_.clear();
    for (int x = 0; x < P_; ++x)
      cursor_[x].last_start = ready_[x], cursor_[x].queued = true;
    if (up)
      work_.assign(order.begin(), order.end());  // popped from the back: deepest first
    else
      work_.assign(order.rbegin(), order.rend());
    while (!work_.empty()) {
      const int x = work_.back();
      work_.pop_back();
      cursor_[x].queued = false;
      running_ = x;
      up ? advance_up(x) : advance_down(x);
    }
    running_ = -1;
    for (int x = 0; x < P_; ++x)
      if (cursor_[x].t < K_ + kPostAhead)
        throw PlanError(
            fmt::format("tree pass timing stalled at member {} (round {}): a planner bug", x, cursor_[x].t));
  }

  // A member whose receive has been timed may go on; the running one goes on by itself.
  void wake(int x) {
    if (x != running_ && !cursor_[x].queued) cursor_[x].queued = true, work_.push_back(x);
  }

  // Times the messages of `child`'s connection whose two ops have started, in order.
  void try_transfers(int child, bool up) {
    const std::vector<ConnectionCost>& cost = up ? up_cost_ : down_cost_;
    int& k = edge_.timed[child];
    for (const int started = std::min(edge_.sends[child], edge_.recvs[child]); k < started; ++k) {
      const std::size_t i = at(child, k);
      const double ss = edge_.send_start[i], rs = edge_.recv_start[i];
      double arrival, recv_end;
      if (unit_steps()) {
        arrival = recv_end = std::max(ss, rs) + 1;
      } else {
        double& free_s = up ? up_free_[child] : down_free_[child];
        const double b = bytes(k);
        const bool pipelined = m_.costs->pipelined();
        double wire_begin = 0;
        arrival = deliver(cost[child], pipelined, ss, rs, b, free_s, &wire_begin);
        recv_end = std::max(arrival, rs);
        // The first child's receive reduces what it receives (a RecvReduce).
        const bool reduces = up && tree_->children[tree_->parent[child]].front() == child;
        if (reduces && m_.params.reduce_Bps > 0)
          recv_end =
              reduced_end(pipelined, wire_begin, rs, recv_end, b / m_.params.reduce_Bps, reduce_free_[child]);
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
        ++edge_.recvs[child];
        try_transfers(child, true);
      } else if (c.op < post_ops) {  // L_j(t), j = op - n + 1
        const int j = c.op - n + 1, k = c.t;
        // R_0(k) (for j = 1) and R_j(k) must have completed; the transfer that completes one wakes x.
        if ((j == 1 && !arrived(children[0], k)) || !arrived(children[j], k)) return;
        const double so_far = j == 1 ? edge_.recv_end[at(children[0], k)] : c.partial_end;
        const double got = edge_.recv_end[at(children[j], k)];
        const double s = start(c, std::max(so_far, got));
        c.partial_end = s + local_s(k, m_.params.reduce_Bps);
        note_end(x, c.partial_end);
        if (j == n - 1) reduced_end_[at(x, k)] = c.partial_end;
      } else {  // S(t - 8)
        const int k = c.t - kPostAhead;
        double deps = -std::numeric_limits<double>::infinity();
        if (n > 0) {
          // With several children, L_{n-1}(k) came earlier in this program; with one, R_0(k) must complete.
          if (n == 1 && !arrived(children[0], k)) return;
          deps = reduced_end_[at(x, k)];
        }
        edge_.send_start[at(x, k)] = start(c, deps);
        ++edge_.sends[x];
        try_transfers(x, true);
      }
      next_op(c, ops_in_round);
    }
  }

  // Whether the k-th message from `child`'s connection (the current direction's) has been timed.
  bool arrived(int child, int k) const { return k < edge_.timed[child]; }
  // When member x has chunk k to send down (it has children): its receive from the parent (once timed), or at
  // the root its reduction (timed in the up direction).
  std::optional<double> have_end(int x, int k) const {
    if (tree_->parent[x] < 0) return reduced_end_[at(x, k)];
    if (!arrived(x, k)) return std::nullopt;
    return edge_.recv_end[at(x, k)];
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
          ++edge_.recvs[x];
          try_transfers(x, false);
        }
      } else {  // F_j(t - 8)
        const int k = c.t - kPostAhead, child = children[c.op - post_ops];
        const std::optional<double> have = have_end(x, k);
        if (!have) return;
        edge_.send_start[at(child, k)] = start(c, *have);
        ++edge_.sends[child];
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
  EdgeTimes& edge_;
  Times &reduced_end_, &up_send_end_;
  std::vector<double> member_end_;
  std::vector<ConnectionCost> up_cost_, down_cost_;
  std::vector<double> up_free_, down_free_;
  std::vector<double> reduce_free_;  // per child: the end of the last reduction of what it sent up
  std::vector<Cursor> cursor_;
  std::vector<int> work_;
  int running_ = -1;
};

// What a channel's timing depends on, in the tree's breadth-first order from its root (children in order):
// each member's child count and ready time, the costs of its connections to its parent, and the chunk sizes.
// Two channels with equal signatures are timed alike, member for member in that order: on a DGX fabric the
// trees of channels 0, 2, 4, 6 are one tree over local ranks shifted, with the same costs, so one is timed.
struct ChannelSignature {
  std::vector<int> order;  // members, breadth first
  std::vector<double> values;
  bool operator==(const ChannelSignature& o) const { return values == o.values; }
};

ChannelSignature signature(const TreePass& pass, int c, std::span<const int> global_rank,
                           std::span<const double> ready_s, const PassTimingModel& m) {
  const Tree& tree = pass.trees[c];
  ChannelSignature sig;
  sig.order.reserve(tree.parent.size());
  sig.order.push_back(tree.root);
  for (std::size_t i = 0; i < sig.order.size(); ++i)
    for (int child : tree.children[sig.order[i]])
      sig.order.push_back(child);
  const ElemRange slice = partition(pass.count, pass.channels(), c);
  sig.values.push_back(static_cast<double>(slice.count));  // with the rounds, fixes every chunk's size
  for (int x : sig.order) {
    sig.values.push_back(static_cast<double>(tree.children[x].size()));
    sig.values.push_back(ready_s[x]);
    if (m.costs == nullptr || tree.parent[x] < 0) continue;
    const ConnectionCost& up = m.costs->at(global_rank[x], global_rank[tree.parent[x]], 2 * c);
    const ConnectionCost& down = m.costs->at(global_rank[tree.parent[x]], global_rank[x], 2 * c + 1);
    sig.values.insert(sig.values.end(), {up.latency_s, up.bandwidth_Bps, up.wire_Bps, down.latency_s,
                                         down.bandwidth_Bps, down.wire_Bps});
  }
  return sig;
}

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
  thread_local TreeScratch scratch;
  TreeChannelTimer timer(pass, global_rank, ready_s, model, scratch);
  struct Timed {
    ChannelSignature signature;
    std::vector<double> end_in_order;  // member ends in the signature's order
  };
  std::vector<Timed> timed;
  for (int c = 0; c < pass.channels(); ++c) {
    ChannelSignature sig = signature(pass, c, global_rank, ready_s, model);
    auto same = std::find_if(timed.begin(), timed.end(), [&](const Timed& t) { return t.signature == sig; });
    if (same == timed.end()) {
      const std::vector<double> channel_end = timer.run(c, sig.order);
      Timed t{sig, {}};
      for (int x : sig.order)
        t.end_in_order.push_back(channel_end[x]);
      same = timed.insert(timed.end(), std::move(t));
    }
    for (std::size_t i = 0; i < sig.order.size(); ++i)
      end[sig.order[i]] = std::max(end[sig.order[i]], same->end_in_order[i]);
  }
  return end;
}

}  // namespace cclab
