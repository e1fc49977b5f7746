#include "engine/ir/progress.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>

#include "engine/ir/frontier.hpp"

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

// Forms the instances of every switch group: its members (the ranks with ops of the group) must each have
// as many, the k-th of one kind at all of them, and each member's chunks must lie inside every member's
// buffers (a switch op reads or writes them all at its own offsets).
std::optional<std::string> match_switch_ops(const Schedule& s, const SwitchGroups& groups,
                                            Matching& matching) {
  for (const auto& [key, members] : groups) {
    const int g = static_cast<int>(key >> 16);
    const auto [first_rank, first_ops] = *members.begin();
    if (!members.contains(g)) {
      return fmt::format("{}: names group {}, but rank {} has no switch op on channel {}",
                         format_op(s, first_rank, first_ops[0]), g, g, key & 0xffff);
    }
    for (const auto& [r, ops] : members) {
      if (ops.size() != first_ops.size()) {
        return fmt::format("{}: rank {} has {} switch ops of this group, rank {} has {}",
                           format_op(s, r, ops[std::min(ops.size(), first_ops.size()) - 1]), r, ops.size(),
                           first_rank, first_ops.size());
      }
    }
    // A remote chunk must fit the smallest member's buffer of its kind (Input, Output or Scratch).
    std::array<std::pair<std::uint64_t, int>, 3> smallest;  // per buffer kind: (size, rank)
    smallest.fill({UINT64_MAX, -1});
    for (const auto& [m, unused] : members)
      for (Buffer b : {Buffer::Input, Buffer::Output, Buffer::Scratch})
        smallest[static_cast<int>(b)] = std::min(smallest[static_cast<int>(b)], {buffer_size(s, m, b), m});
    for (std::size_t k = 0; k < first_ops.size(); ++k) {
      const OpKind kind = s.ranks[first_rank].ops[first_ops[k]].kind;
      std::vector<OpRef> instance;
      instance.reserve(members.size());
      for (const auto& [r, ops] : members) {
        const Op& op = s.ranks[r].ops[ops[k]];
        if (op.kind != kind) {
          return fmt::format("{}: is switch op {} of its group, which is a {} at rank {}",
                             format_op(s, r, ops[k]), k, to_string(kind), first_rank);
        }
        const Chunk& remote = op.kind == OpKind::SwitchReduce ? op.src : op.dst;
        const auto [size, m] = smallest[static_cast<int>(remote.buffer)];
        if (remote.offset > size || remote.count > size - remote.offset) {
          return fmt::format("{}: its chunk {}[{}, {}) is outside rank {}'s buffer of {} elements",
                             format_op(s, r, ops[k]), to_string(remote.buffer), remote.offset, remote.end(),
                             m, size);
        }
        matching.partner[r][ops[k]] = OpRef{kSwitchInstance, static_cast<OpId>(matching.instances.size())};
        instance.push_back(OpRef{r, ops[k]});
      }
      matching.instances.push_back(std::move(instance));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_structure(const Schedule& s, Matching& matching) {
  const int world = s.spec.world_size;
  if (world < 1) return fmt::format("world size must be >= 1 (got {})", world);
  if (static_cast<int>(s.ranks.size()) != world) {
    return fmt::format("schedule has {} rank programs for world size {}", s.ranks.size(), world);
  }
  if (is_rooted(s.spec.collective) && (s.spec.root < 0 || s.spec.root >= world)) {
    return fmt::format("root {} is not a rank of a world of {}", s.spec.root, world);
  }
  if (auto problem = alltoall_blocks_problem(s.spec)) return problem;
  matching.partner.assign(world, {});
  // recvs[b][(a, c)]: ids of b's receives from a on channel c, in program order.
  std::vector<std::unordered_map<std::uint64_t, std::vector<OpId>>> recvs(world);
  matching.instances.clear();
  for (int r = 0; r < world; ++r) {
    const Program& p = s.ranks[r];
    matching.partner[r].assign(p.ops.size(), OpRef{});
    for (OpId i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      if (static_cast<std::uint8_t>(op.kind) > static_cast<std::uint8_t>(kLastOpKind)) {
        return fmt::format("rank {} op {}: unknown op kind", r, i);
      }
      if (is_comm(op.kind) && (op.peer < 0 || op.peer >= world || op.peer == r)) {
        return fmt::format("{}: peer {} is not another rank of a world of {}", format_op(s, r, i), op.peer,
                           world);
      }
      if (is_switch(op.kind) && (op.peer < 0 || op.peer >= world)) {
        return fmt::format("{}: group {} is not a rank of a world of {}", format_op(s, r, i), op.peer, world);
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
  if (auto e = match_switch_ops(s, switch_groups(s), matching)) return e;
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
  std::vector<RankFrontier> ranks;
  ranks.reserve(world);
  for (int r = 0; r < world; ++r)
    ranks.emplace_back(s.ranks[r], channels);

  // Starts run first, everywhere they can; matched pairs complete one at a time, oldest first. Deferring
  // completions keeps ops pending as long as the semantics allow, which is what exposes races to the
  // verifier. The worklist holds the ranks that may have ops to start.
  std::vector<int> worklist;
  for (int r = world - 1; r >= 0; --r)
    worklist.push_back(r);
  // (send, recv) pairs whose two sides have started, or {instance, {}} for a switch instance whose members
  // have all started (rank kSwitchInstance).
  std::deque<std::pair<OpRef, OpRef>> ready;
  std::vector<std::uint32_t> instance_started(matching.instances.size(), 0);
  auto complete = [&](int r, OpId i) {
    if (ranks[r].complete(i)) worklist.push_back(r);
  };

  while (!hooks.stop()) {
    while (!worklist.empty() && !hooks.stop()) {
      const int r = worklist.back();
      worklist.pop_back();
      ranks[r].start_ready([&](OpId i) {
        if (hooks.stop()) return;
        hooks.on_start(r, i);
        const OpKind kind = s.ranks[r].ops[i].kind;
        if (is_switch(kind)) {
          const OpRef instance = matching.partner[r][i];
          if (++instance_started[instance.op] == matching.instances[instance.op].size())
            ready.push_back({instance, OpRef{}});
          return;
        }
        if (!is_comm(kind)) {
          hooks.on_local(r, i);
          ranks[r].complete(i);  // start_ready picks up what this lets start
          return;
        }
        const OpRef self{r, i}, other = matching.partner[r][i];
        if (ranks[other.rank].state(other.op) != RankFrontier::State::Started) return;  // the peer queues it
        ready.push_back(kind == OpKind::Send ? std::pair(self, other) : std::pair(other, self));
      });
    }
    if (ready.empty() || hooks.stop()) break;
    const auto [send, recv] = ready.front();
    ready.pop_front();
    if (send.rank == kSwitchInstance) {
      const std::vector<OpRef>& members = matching.instances[send.op];
      hooks.on_switch(members);
      for (const OpRef& m : members)
        complete(m.rank, m.op);
      continue;
    }
    hooks.on_transfer(send.rank, send.op, recv.rank, recv.op);
    complete(send.rank, send.op);
    complete(recv.rank, recv.op);
  }
  if (hooks.stop()) return std::nullopt;
  for (int r = 0; r < world; ++r) {
    const RankFrontier& st = ranks[r];
    const std::optional<OpId> stuck = st.first_unfinished();
    if (!stuck) continue;
    const char* why =
        st.state(*stuck) == RankFrontier::State::Started
            ? "waits for its peer (or a member of its group), which never reaches the matching op"
            : "never starts: a dependency or the peer it waits on is blocked";
    return fmt::format("deadlock: {} {} ({} of {} ops of rank {} completed)", format_op(s, r, *stuck), why,
                       st.done_count(), st.op_count(), r);
  }
  return std::nullopt;
}

}  // namespace cclab
