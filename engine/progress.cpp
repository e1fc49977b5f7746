#include "engine/progress.hpp"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>

namespace cclab {
namespace {

std::uint64_t buffer_size(const Schedule& s, int rank, Buffer b) {
  switch (b) {
    case Buffer::Input:
      return input_count(s.spec, rank);
    case Buffer::Output:
      return output_count(s.spec, rank);
    case Buffer::Scratch:
      return s.ranks[rank].scratch_count;
  }
  return 0;
}

std::optional<std::string> check_chunk(const Schedule& s, int rank, OpId id, const Chunk& c,
                                       const char* role) {
  const std::uint64_t size = buffer_size(s, rank, c.buffer);
  if (c.offset > size || c.count > size - c.offset) {
    return fmt::format("{}: {} chunk {}[{}, {}) is outside the buffer of {} elements", format_op(s, rank, id),
                       role, to_string(c.buffer), c.offset, c.offset + c.count, size);
  }
  return std::nullopt;
}

// Key of a (peer, channel) connection in one rank's view.
std::uint64_t connection_key(std::int32_t peer, std::uint16_t channel) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 16) | channel;
}

}  // namespace

std::optional<std::string> check_structure(const Schedule& s, Matching& matching) {
  const int world = s.spec.world_size;
  if (world < 1) return fmt::format("world size must be >= 1 (got {})", world);
  if (static_cast<int>(s.ranks.size()) != world) {
    return fmt::format("schedule has {} rank programs for world size {}", s.ranks.size(), world);
  }
  if ((s.spec.collective == Collective::Broadcast || s.spec.collective == Collective::Reduce) &&
      (s.spec.root < 0 || s.spec.root >= world)) {
    return fmt::format("root {} is not a rank of a world of {}", s.spec.root, world);
  }
  matching.partner.assign(world, {});
  // recvs[b][(a, c)]: ids of b's receives from a on channel c, in program order.
  std::vector<std::unordered_map<std::uint64_t, std::vector<OpId>>> recvs(world);
  for (int r = 0; r < world; ++r) {
    const Program& p = s.ranks[r];
    matching.partner[r].assign(p.ops.size(), OpRef{});
    for (OpId i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      if (static_cast<std::uint8_t>(op.kind) > static_cast<std::uint8_t>(OpKind::LocalReduce)) {
        return fmt::format("rank {} op {}: unknown op kind", r, i);
      }
      if (is_comm(op.kind) && (op.peer < 0 || op.peer >= world || op.peer == r)) {
        return fmt::format("{}: peer {} is not another rank of a world of {}", format_op(s, r, i), op.peer,
                           world);
      }
      if (op.deps_begin > p.deps.size() || op.deps_count > p.deps.size() - op.deps_begin) {
        return fmt::format("rank {} op {}: deps outside the dependency list", r, i);
      }
      for (OpId d : p.deps_of(op)) {
        if (d >= p.ops.size() || d == i)
          return fmt::format("{}: dep {} is not another op of rank {}", format_op(s, r, i), d, r);
      }
      if (reads_src(op.kind))
        if (auto e = check_chunk(s, r, i, op.src, "source")) return e;
      if (writes_dst(op.kind))
        if (auto e = check_chunk(s, r, i, op.dst, "destination")) return e;
      if (op.kind != OpKind::Send && op.kind != OpKind::Recv && op.src.count != op.dst.count) {
        return fmt::format("{}: source and destination counts differ", format_op(s, r, i));
      }
      if (is_recv(op.kind)) recvs[r][connection_key(op.peer, op.channel)].push_back(i);
    }
    // Deps must be acyclic: a topological order reaches every op.
    const std::vector<OpId> order = topological_order(p, dependents_of(p));
    if (order.size() != p.ops.size()) {
      std::vector<bool> placed(p.ops.size(), false);
      for (const OpId i : order)
        placed[i] = true;
      const auto first = std::find(placed.begin(), placed.end(), false) - placed.begin();
      return fmt::format("{}: its deps form a cycle", format_op(s, r, static_cast<OpId>(first)));
    }
  }
  // Pair the k-th send a->b on channel c with the k-th receive at b from a on channel c.
  for (int a = 0; a < world; ++a) {
    std::unordered_map<std::uint64_t, std::size_t> sent;
    const Program& p = s.ranks[a];
    for (OpId i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      if (op.kind != OpKind::Send) continue;
      const std::size_t k = sent[connection_key(op.peer, op.channel)]++;
      auto& list = recvs[op.peer][connection_key(a, op.channel)];
      if (k >= list.size()) {
        return fmt::format(
            "{}: no matching receive at rank {} (it posts {} receives from rank {} on channel {})",
            format_op(s, a, i), op.peer, list.size(), a, op.channel);
      }
      const OpId j = list[k];
      const Op& rop = s.ranks[op.peer].ops[j];
      if (rop.dst.count != op.src.count) {
        return fmt::format("{}: sends {} elements but its matching receive ({}) expects {}",
                           format_op(s, a, i), op.src.count, format_op(s, op.peer, j), rop.dst.count);
      }
      matching.partner[a][i] = OpRef{op.peer, j};
      matching.partner[op.peer][j] = OpRef{a, i};
    }
  }
  for (int b = 0; b < world; ++b)
    for (OpId j = 0; j < s.ranks[b].ops.size(); ++j)
      if (is_recv(s.ranks[b].ops[j].kind) && matching.partner[b][j].rank < 0) {
        const Op& op = s.ranks[b].ops[j];
        return fmt::format("{}: no matching send from rank {} on channel {}", format_op(s, b, j), op.peer,
                           op.channel);
      }
  return std::nullopt;
}

std::optional<std::string> walk_schedule(const Schedule& s, const Matching& matching, ProgressHooks& hooks) {
  const int world = s.spec.world_size;
  const int channels = std::max(1, s.num_channels());
  enum : std::uint8_t { kIdle, kStarted, kDone };

  struct RankState {
    std::vector<std::vector<OpId>> channel_ops;  // per channel, op ids in program order
    std::vector<std::size_t> next;               // per channel, index of the next op to start
    struct OpState {
      std::uint32_t waiting = 0;  // deps not yet done
      std::uint8_t state = kIdle;
      OpKind kind = OpKind::Send;
      std::uint16_t channel = 0;
    };
    std::vector<OpState> op;  // per op, packed: the walk reads these and never needs the 64-byte Op
    Dependents dependents;
    std::size_t done = 0;
  };
  std::vector<RankState> ranks(world);
  for (int r = 0; r < world; ++r) {
    const Program& p = s.ranks[r];
    RankState& st = ranks[r];
    st.channel_ops.assign(channels, {});
    st.next.assign(channels, 0);
    st.op.assign(p.ops.size(), {});
    for (OpId i = 0; i < p.ops.size(); ++i) {
      st.channel_ops[p.ops[i].channel].push_back(i);
      st.op[i] = {p.ops[i].deps_count, kIdle, p.ops[i].kind, p.ops[i].channel};
    }
    st.dependents = dependents_of(p);
  }

  // Starts run first, everywhere they can; matched pairs complete one at a time, oldest first. Deferring
  // completions keeps ops pending as long as the semantics allow, which is what exposes races to the
  // verifier. The worklist holds (rank, channel) lanes whose next op may have become startable.
  std::vector<std::pair<int, int>> worklist;
  for (int r = world - 1; r >= 0; --r)
    for (int c = channels - 1; c >= 0; --c)
      worklist.push_back({r, c});
  std::deque<std::pair<OpRef, OpRef>> ready;  // (send, recv) pairs whose two sides have started
  auto complete = [&](int r, OpId i) {
    RankState& st = ranks[r];
    st.op[i].state = kDone;
    ++st.done;
    for (const OpId j : st.dependents.of(i)) {
      if (--st.op[j].waiting == 0) worklist.push_back({r, st.op[j].channel});
    }
  };

  while (!hooks.stop()) {
    while (!worklist.empty() && !hooks.stop()) {
      const auto [r, c] = worklist.back();
      worklist.pop_back();
      RankState& st = ranks[r];
      auto& list = st.channel_ops[c];
      while (st.next[c] < list.size() && st.op[list[st.next[c]]].waiting == 0 && !hooks.stop()) {
        const OpId i = list[st.next[c]++];
        st.op[i].state = kStarted;
        hooks.on_start(r, i);
        const OpKind kind = st.op[i].kind;
        if (!is_comm(kind)) {
          hooks.on_local(r, i);
          complete(r, i);
          continue;
        }
        const OpRef self{r, i}, other = matching.partner[r][i];
        if (ranks[other.rank].op[other.op].state != kStarted) continue;  // the peer will queue the pair
        ready.push_back(kind == OpKind::Send ? std::pair(self, other) : std::pair(other, self));
      }
    }
    if (ready.empty() || hooks.stop()) break;
    const auto [send, recv] = ready.front();
    ready.pop_front();
    hooks.on_transfer(send.rank, send.op, recv.rank, recv.op);
    complete(send.rank, send.op);
    complete(recv.rank, recv.op);
  }
  if (hooks.stop()) return std::nullopt;
  for (int r = 0; r < world; ++r) {
    const RankState& st = ranks[r];
    if (st.done == s.ranks[r].ops.size()) continue;
    for (int c = 0; c < channels; ++c) {
      const auto& list = st.channel_ops[c];
      for (std::size_t k = 0; k < list.size(); ++k) {
        const OpId i = list[k];
        if (st.op[i].state == kDone) continue;
        const char* why = st.op[i].state == kStarted
                              ? "waits for its peer, which never reaches the matching op"
                              : "never starts: a dependency or the peer it waits on is blocked";
        return fmt::format("deadlock: {} {} ({} of {} ops of rank {} completed)", format_op(s, r, i), why,
                           st.done, s.ranks[r].ops.size(), r);
      }
    }
  }
  return std::nullopt;
}

}  // namespace cclab
