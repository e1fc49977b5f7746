#include "engine/model/ring_timing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/memory.hpp"

namespace cclab {

std::vector<double> time_ring_pass(const RingPass& pass, std::span<const int> global_rank,
                                   std::span<const double> ready_s, const RingTimingModel& m) {
  const int P = pass.members(), C = pass.channels(), K = pass.rounds();
  const std::size_t PK = static_cast<std::size_t>(P) * K;
  const bool rs = pass.reduce_scatter, ag = pass.allgather;
  const bool unit_steps = m.costs == nullptr;
  std::vector<double> member_end(ready_s.begin(), ready_s.end());
  constexpr double kNever = -std::numeric_limits<double>::infinity();
  // Local work and transfers, with the explicit walk's arithmetic, so that both give the same doubles.
  auto local_s = [&](std::uint64_t n, double rate) {
    if (unit_steps) return 0.0;
    return rate > 0 ? n * m.elem_bytes / rate : 0.0;
  };
  std::vector<double> last(P), ss(P), rr(P), free_s(P), latency_s(P), bandwidth_Bps(P);
  auto transfer = [&](int i, double send_start, double recv_start, std::uint64_t n) {
    if (unit_steps) return std::max(send_start, recv_start) + 1;
    const double begin = std::max({send_start, recv_start, free_s[i]});
    const double bytes = n * m.elem_bytes;
    const double wire_s = std::isinf(bandwidth_Bps[i]) ? 0.0 : bytes / bandwidth_Bps[i];
    const double end = begin + latency_s[i] + wire_s;
    free_s[i] = end;
    return end;
  };
  std::vector<std::uint64_t> size(PK);  // elements of (owner, chunk) on the current channel
  std::vector<double> recv_prev(PK), recv_cur(PK), seed(PK);
  // The allgather's receive of block i-s at step s overwrites what the reduce-scatter sent from it at step s:
  // it waits for that send, whose end time is kept per (position, step, chunk).
  std::vector<double> rs_send;
  if (rs && ag && P > 1) {
    const std::uint64_t cells = static_cast<std::uint64_t>(P) * (P - 1) * K;
    require_within_memory_budget(
        cells * sizeof(double), fmt::format("the α-β recurrence of a {}-rank ring ({} send times)", P, cells),
        "use fewer chunks per block (a larger --chunk) or the tree or hierarchical algorithm");
    rs_send.resize(cells);
  }
  for (int c = 0; c < C; ++c) {
    const auto& ring = pass.rings[c];
    for (int owner = 0; owner < P; ++owner)
      for (int k = 0; k < K; ++k)
        size[static_cast<std::size_t>(owner) * K + k] =
            partition(partition(partition(pass.count, P, owner), C, c), K, k).count;
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
    if (!unit_steps) {
      for (int i = 0; i < P; ++i) {
        const ConnectionCost& conn = m.costs->at(global_rank[ring[i]], global_rank[ring[(i + 1) % P]], c);
        latency_s[i] = conn.latency_s;
        bandwidth_Bps[i] = conn.bandwidth_Bps;
        free_s[i] = 0;
      }
    }
    auto position = [P](long v) { return static_cast<int>(((v % P) + P) % P); };
    if (rs) {
      for (int s = 0; s < P - 1; ++s) {
        for (int k = 0; k < K; ++k) {
          for (int i = 0; i < P; ++i) {
            // send(s, k) waits for the receive of its block at step s-1; recv_reduce(s, k) follows it.
            ss[i] = std::max(last[i], s == 0 ? kNever : recv_prev[static_cast<std::size_t>(i) * K + k]);
            rr[i] = last[i] = ss[i];
          }
          for (int i = 0; i < P; ++i) {
            const int j = (i + 1) % P;
            const std::uint64_t n = size[static_cast<std::size_t>(ring[position(i - s - 1)]) * K + k];
            const double end = transfer(i, ss[i], rr[j], n);
            note_end(i, end);
            if (!rs_send.empty()) rs_send[(static_cast<std::size_t>(i) * (P - 1) + s) * K + k] = end;
            const double got = end + local_s(n, m.params.reduce_Bps);
            recv_cur[static_cast<std::size_t>(j) * K + k] = got;
            note_end(j, got);
          }
        }
        std::swap(recv_prev, recv_cur);
      }
      seed = recv_prev;  // the reduced own block: what the allgather's first send waits for
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
      for (int s = 0; s < P - 1; ++s) {
        for (int k = 0; k < K; ++k) {
          for (int i = 0; i < P; ++i) {
            const std::size_t at = static_cast<std::size_t>(i) * K + k;
            ss[i] = last[i] = std::max(last[i], s == 0 ? seed[at] : recv_prev[at]);
            const double overwrite =
                rs_send.empty() ? kNever : rs_send[(static_cast<std::size_t>(i) * (P - 1) + s) * K + k];
            rr[i] = last[i] = std::max(last[i], overwrite);
          }
          for (int i = 0; i < P; ++i) {
            const int j = (i + 1) % P;
            const std::uint64_t n = size[static_cast<std::size_t>(ring[position(i - s)]) * K + k];
            const double end = transfer(i, ss[i], rr[j], n);
            note_end(i, end);
            recv_cur[static_cast<std::size_t>(j) * K + k] = end;
            note_end(j, end);
          }
        }
        std::swap(recv_prev, recv_cur);
      }
    }
  }
  return member_end;
}

}  // namespace cclab
