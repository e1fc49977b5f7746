#include "engine/model/pass_timing.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include <fmt/format.h>

#include "common/memory.hpp"

namespace cclab {
namespace {

// Steady state. One step of a ring phase maps the state (per position: the end of its last op and of its last
// transfer; per position and chunk: the arrival of the block it forwards next and the end of its last send)
// by max and + only, with the same constants every step when every block of the channel has the same size
// (the links of a position do not change from step to step). Such a map commutes with adding a constant to
// every component, so once one step has advanced every component by the same λ, every later step does too:
// the remaining steps are skipped by adding m·λ. Rounding makes two equal increments differ in the last bits;
// a relative 1e-12 accepts that, far inside the 1e-9 the compact model promises against the explicit walk.
constexpr std::size_t kMaxPeriod = 64;

bool uniform_increment(std::span<const double> now, std::span<const double> before, double& lambda) {
  if (now.empty()) return false;
  lambda = now[0] - before[0];
  if (!(lambda >= 0) || std::isinf(lambda)) return false;
  for (std::size_t x = 0; x < now.size(); ++x) {
    const double d = now[x] - before[x];
    if (std::abs(d - lambda) > 1e-12 * std::max(1e-9, std::abs(now[x]))) return false;
  }
  return true;
}

}  // namespace

std::vector<double> time_ring_pass(const RingPass& pass, std::span<const int> global_rank,
                                   std::span<const double> ready_s, const PassTimingModel& m) {
  const int P = pass.members(), C = pass.channels(), K = pass.rounds();
  const std::size_t PK = static_cast<std::size_t>(P) * K;
  const bool rs = pass.reduce_scatter, ag = pass.allgather;
  const bool unit_steps = m.costs == nullptr;
  std::vector<double> member_end(ready_s.begin(), ready_s.end());
  constexpr double kNever = -std::numeric_limits<double>::infinity();
  // Local work and transfers, with the explicit walk's arithmetic, so that both give the same doubles.
  auto local_s = [&](double n, double rate) {
    if (unit_steps) return 0.0;
    return rate > 0 ? n * m.elem_bytes / rate : 0.0;
  };
  // The state a step maps, as one array (steady-state detection compares it whole): last op end and link
  // free time per position, then per (position, chunk) the arrival to forward next and the last send's end.
  const std::size_t kLast = 0, kFree = P, kRecv = 2 * static_cast<std::size_t>(P), kSent = kRecv + PK;
  // Last, per position, the end of the last reduction of what it received (NCCL's protocols reduce beside
  // the transfer, one message after another: engine/model/connections.hpp reduced_end); only the
  // reduce-scatter reads it (under those protocols), so the other steady states are found without it.
  const std::size_t kReduced = kSent + PK;
  std::vector<double> state(kReduced + P);
  std::deque<std::vector<double>> history;  // the states after the last kMaxPeriod steps, oldest first
  double* last = state.data() + kLast;
  double* free_s = state.data() + kFree;
  double* recv_prev = state.data() + kRecv;
  double* sent = state.data() + kSent;
  double* reduced = state.data() + kReduced;
  std::vector<double> ss(P), rr(P), recv_cur(PK), seed(PK);
  std::vector<ConnectionCost> conn(P);  // position i -> i+1 on the current channel
  // The walk's message rule; the caller completes the receive at max(arrival, receiver's start).
  const bool pipelined = !unit_steps && m.costs->pipelined();
  auto transfer = [&](int i, double send_start, double recv_start, double n, double& wire_begin) {
    if (unit_steps) {
      wire_begin = std::max(send_start, recv_start);
      return free_s[i] = wire_begin + 1;  // (free_s: part of the state)
    }
    return deliver(conn[i], pipelined, send_start, recv_start, n * m.elem_bytes, free_s[i], &wire_begin);
  };
  std::vector<double> size(PK);  // elements of (owner, chunk) on the current channel (whole unless averaged)
  // Unequal blocks defeat the steady-state skip: past the cell budget, every block takes the mean size.
  const std::uint64_t cells =
      static_cast<std::uint64_t>(C) * P * std::max(P - 1, 0) * K * ((rs ? 1 : 0) + (ag ? 1 : 0));
  const bool may_average = cells > m.params.ring_exact_cells;
  // The allgather's receive of block i-s at step s overwrites what the reduce-scatter sent from it at step s:
  // it waits for that send, whose end time is kept per (step, position, chunk), up to the step where the
  // reduce-scatter reached its steady state (later ones are that row plus a multiple of its λ).
  std::vector<double> rs_send;
  // Past the stored rows the reduce-scatter repeats its last `rs_period` rows, each period rs_Lambda later.
  std::size_t rs_rows = 0;
  int rs_period = 1;
  double rs_Lambda = 0;
  auto rs_send_at = [&](int s, int i, int k) {
    const std::size_t at = static_cast<std::size_t>(i) * K + k;
    if (static_cast<std::size_t>(s) < rs_rows) return rs_send[static_cast<std::size_t>(s) * PK + at];
    const std::size_t first = rs_rows - rs_period, past = static_cast<std::size_t>(s) - first;
    return rs_send[(first + past % rs_period) * PK + at] + static_cast<double>(past / rs_period) * rs_Lambda;
  };
  for (int c = 0; c < C; ++c) {
    const auto& ring = pass.rings[c];
    for (int owner = 0; owner < P; ++owner)
      for (int k = 0; k < K; ++k)
        size[static_cast<std::size_t>(owner) * K + k] =
            static_cast<double>(partition(partition(partition(pass.count, P, owner), C, c), K, k).count);
    // Every step maps the state alike when every owner's block has the same size (per chunk).
    bool uniform_sizes = true;
    for (int owner = 1; owner < P && uniform_sizes; ++owner)
      for (int k = 0; k < K; ++k)
        uniform_sizes &= size[static_cast<std::size_t>(owner) * K + k] == size[k];
    if (!uniform_sizes && may_average) {
      for (int k = 0; k < K; ++k) {
        double total = 0;
        for (int owner = 0; owner < P; ++owner)
          total += size[static_cast<std::size_t>(owner) * K + k];
        for (int owner = 0; owner < P; ++owner)
          size[static_cast<std::size_t>(owner) * K + k] = total / P;
      }
      uniform_sizes = true;
    }
    auto note_end = [&](int i, double t) {
      double& e = member_end[ring[i]];
      e = std::max(e, t);
    };
    for (int i = 0; i < P; ++i)
      last[i] = ready_s[ring[i]];
    if (P == 1) {  // one copy per chunk
      for (int k = 0; k < K; ++k)
        note_end(0, last[0] + local_s(size[k], m.params.copy_Bps));
      continue;
    }
    std::fill(sent, sent + PK, kNever);
    for (int i = 0; i < P; ++i) {
      free_s[i] = reduced[i] = 0;
      if (unit_steps) continue;
      conn[i] = m.costs->at(global_rank[ring[i]], global_rank[ring[(i + 1) % P]], c);
    }
    auto position = [P](long v) { return static_cast<int>(((v % P) + P) % P); };
    // After step s of a phase of `steps`: when the state is some c <= kMaxPeriod steps' state plus one Λ in
    // every component, it repeats so with period c; the whole periods left are skipped (s advances by them,
    // the state by as many Λ) and the caller simulates the rest. `allowed(Λ, c)` vetoes a period (the
    // allgather's inputs from the reduce-scatter). The latest arrivals and sends are noted (times only grow).
    auto fast_forward = [&](int& s, int steps, double& Lambda, int& period, auto&& allowed,
                            std::size_t compared) {
      if (!uniform_sizes) return false;
      bool found = false;
      for (int c = 1; c <= static_cast<int>(history.size()) && !found; ++c) {
        double L = 0;
        found = uniform_increment(std::span<const double>(state).first(compared),
                                  std::span<const double>(history[history.size() - c]).first(compared), L) &&
                allowed(L, c);
        if (found) Lambda = L, period = c;
      }
      if (!found) {
        if (history.size() == kMaxPeriod) {
          std::vector<double> recycled = std::move(history.front());
          history.pop_front();
          recycled.assign(state.begin(), state.end());
          history.push_back(std::move(recycled));
        } else {
          history.push_back(state);
        }
        return false;
      }
      history.clear();
      const int periods = (steps - 1 - s) / period;
      if (periods == 0) return true;
      for (double& x : state)
        x += periods * Lambda;
      s += periods * period;
      for (int i = 0; i < P; ++i) {
        note_end(i, last[i]);
        for (int k = 0; k < K; ++k) {
          note_end(i, sent[static_cast<std::size_t>(i) * K + k]);
          note_end(i, recv_prev[static_cast<std::size_t>(i) * K + k]);
        }
      }
      return true;
    };
    history.clear();
    history.push_back(state);
    rs_rows = 0;
    rs_period = 1;
    rs_Lambda = 0;
    if (rs) {
      bool periodic = false;  // past the detection: rows follow from the stored ones
      for (int s = 0; s < P - 1; ++s) {
        for (int k = 0; k < K; ++k) {
          for (int i = 0; i < P; ++i) {
            // send(s, k) waits for the receive of its block at step s-1; recv_reduce(s, k) follows it.
            ss[i] = std::max(last[i], s == 0 ? kNever : recv_prev[static_cast<std::size_t>(i) * K + k]);
            rr[i] = last[i] = ss[i];
          }
          for (int i = 0; i < P; ++i) {
            const int j = (i + 1) % P;
            const double n = size[static_cast<std::size_t>(ring[position(i - s - 1)]) * K + k];
            double wire_begin = 0;
            const double end = transfer(i, ss[i], rr[j], n, wire_begin);
            note_end(i, end);
            sent[static_cast<std::size_t>(i) * K + k] = end;
            const double got = reduced_end(pipelined, wire_begin, rr[j], std::max(end, rr[j]),
                                           local_s(n, m.params.reduce_Bps), reduced[j]);
            recv_cur[static_cast<std::size_t>(j) * K + k] = got;
            note_end(j, got);
          }
        }
        std::copy(recv_cur.begin(), recv_cur.end(), recv_prev);
        if (ag && !periodic) {
          // The table grows until the steady state (rarely past a few node periods); checked as it doubles.
          if ((s & (s + 1)) == 0) {
            const std::uint64_t sends = std::min<std::uint64_t>(2 * (s + 1), P - 1) * PK;
            require_within_memory_budget(
                sends * sizeof(double),
                fmt::format("the α-β recurrence of a {}-rank ring ({} send times)", P, sends),
                "use fewer chunks per block (a larger --chunk) or the tree or hierarchical algorithm");
          }
          rs_send.resize((s + 1) * PK);
          std::copy(sent, sent + PK, rs_send.begin() + static_cast<std::ptrdiff_t>(s * PK));
          rs_rows = s + 1;
        }
        if (!periodic && fast_forward(
                             s, P - 1, rs_Lambda, rs_period, [](double, int) { return true; },
                             pipelined ? state.size() : kReduced))
          periodic = true;
      }
      if (!periodic) rs_period = 1, rs_Lambda = 0;  // never read past the stored rows then
      // The reduced own block: what the allgather's first send waits for.
      std::copy(recv_prev, recv_prev + PK, seed.begin());
    }
    if (ag) {
      if (!rs) {  // the own block is copied to the output first
        for (int k = 0; k < K; ++k) {
          for (int i = 0; i < P; ++i) {
            const double end =
                last[i] + local_s(size[static_cast<std::size_t>(ring[i]) * K + k], m.params.copy_Bps);
            seed[static_cast<std::size_t>(i) * K + k] = end;
            note_end(i, end);
          }
        }
      }
      // The allgather's steps also read the reduce-scatter's send times: its steady state is the allgather's
      // only if those advance by the same λ, or stay below what they are maxed with (checked per step).
      const bool reads_rs = rs && rs_rows > 0;
      // The reduce-scatter's last sends: once every state value they are maxed with has passed them, no
      // overwrite input binds again (those values only grow).
      double rs_latest = kNever;
      if (reads_rs) {
        for (int i = 0; i < P; ++i)
          for (int k = 0; k < K; ++k)
            rs_latest = std::max(rs_latest, rs_send_at(P - 2, i, k));
      }
      history.clear();
      history.push_back(state);
      bool periodic = false;
      int last_bind = -1;  // the last step at which a reduce-scatter send held a receive back
      for (int s = 0; s < P - 1; ++s) {
        bool overwrite_binds = false;
        double least_compared = std::numeric_limits<double>::infinity();
        for (int k = 0; k < K; ++k) {
          for (int i = 0; i < P; ++i) {
            const std::size_t at = static_cast<std::size_t>(i) * K + k;
            ss[i] = last[i] = std::max(last[i], s == 0 ? seed[at] : recv_prev[at]);
            const double overwrite = reads_rs ? rs_send_at(s, i, k) : kNever;
            overwrite_binds |= overwrite > last[i];
            least_compared = std::min(least_compared, last[i]);
            rr[i] = last[i] = std::max(last[i], overwrite);
          }
          for (int i = 0; i < P; ++i) {
            const int j = (i + 1) % P;
            const double n = size[static_cast<std::size_t>(ring[position(i - s)]) * K + k];
            double wire_begin = 0;  // (no reduction to run beside it)
            const double end = transfer(i, ss[i], rr[j], n, wire_begin);
            note_end(i, end);
            sent[static_cast<std::size_t>(i) * K + k] = end;
            const double got = std::max(end, rr[j]);
            recv_cur[static_cast<std::size_t>(j) * K + k] = got;
            note_end(j, got);
          }
        }
        std::copy(recv_cur.begin(), recv_cur.end(), recv_prev);
        // Later overwrite inputs stay non-binding when all of them are behind every value they meet, or when
        // they repeat (past the reduce-scatter's stored rows) no faster than the state and none bound during
        // a window that both periods divide (c · rs_period steps): each later window is the same one shifted,
        // the inputs by no more than the state. Then this period is every later one.
        if (overwrite_binds) last_bind = s;
        double Lambda = 0;
        int period = 1;
        const bool never_binds = !reads_rs || rs_latest <= least_compared;
        auto allowed = [&](double L, int c) {
          if (never_binds) return true;
          const int window = c * rs_period;
          const bool repeating =
              static_cast<std::size_t>(s) + 1 >= rs_rows + static_cast<std::size_t>(window) &&
              s - last_bind >= window;
          return repeating && rs_Lambda / rs_period <= L / c;
        };
        if (!periodic && fast_forward(s, P - 1, Lambda, period, allowed, kReduced)) periodic = true;
      }
    }
  }
  return member_end;
}

}  // namespace cclab
