#include "engine/ir/schedule.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cclab {
namespace {

constexpr std::array<std::pair<OpKind, std::string_view>, 7> kOpKinds{
    {{OpKind::Send, "send"},
     {OpKind::Recv, "recv"},
     {OpKind::RecvReduce, "recv_reduce"},
     {OpKind::Copy, "copy"},
     {OpKind::LocalReduce, "local_reduce"},
     {OpKind::SwitchReduce, "switch_reduce"},
     {OpKind::SwitchStore, "switch_store"}}};
constexpr std::array<std::pair<Buffer, std::string_view>, 3> kBuffers{
    {{Buffer::Input, "input"}, {Buffer::Output, "output"}, {Buffer::Scratch, "scratch"}}};

std::string format_chunk(const Chunk& c) {
  return fmt::format("{}[{}+{}]", to_string(c.buffer), c.offset, c.count);
}

}  // namespace

std::string_view to_string(OpKind kind) {
  return name_of(kOpKinds, kind);
}
std::string_view to_string(Buffer buffer) {
  return name_of(kBuffers, buffer);
}
std::optional<OpKind> parse_op_kind(std::string_view text) {
  return value_of(kOpKinds, text);
}
std::optional<Buffer> parse_buffer(std::string_view text) {
  return value_of(kBuffers, text);
}

OpId Program::add(Op op, std::span<const OpId> op_deps) {
  op.deps_begin = static_cast<std::uint32_t>(deps.size());
  for (OpId d : op_deps)
    if (d != kNoOp) deps.push_back(d);
  op.deps_count = static_cast<std::uint32_t>(deps.size() - op.deps_begin);
  ops.push_back(op);
  return static_cast<OpId>(ops.size() - 1);
}

Dependents dependents_of(const Program& program) {
  Dependents d;
  d.begin.assign(program.ops.size() + 1, 0);
  for (const Op& op : program.ops)
    for (const OpId dep : program.deps_of(op))
      ++d.begin[dep + 1];
  for (std::size_t i = 1; i < d.begin.size(); ++i)
    d.begin[i] += d.begin[i - 1];
  d.ids.resize(d.begin.back());
  std::vector<std::uint32_t> fill(d.begin.begin(), d.begin.end() - 1);
  for (OpId i = 0; i < program.ops.size(); ++i)
    for (const OpId dep : program.deps_of(program.ops[i]))
      d.ids[fill[dep]++] = i;
  return d;
}

std::vector<OpId> topological_order(const Program& program, const Dependents& dependents) {
  const std::size_t n = program.ops.size();
  std::vector<std::uint32_t> waiting(n);
  for (OpId i = 0; i < n; ++i)
    waiting[i] = program.ops[i].deps_count;
  std::vector<OpId> order, ready;
  order.reserve(n);
  for (OpId i = n; i-- > 0;)
    if (waiting[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    const OpId i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (const OpId j : dependents.of(i))
      if (--waiting[j] == 0) ready.push_back(j);
  }
  return order;
}

Schedule empty_schedule(const CollectiveSpec& spec, std::string algorithm) {
  Schedule s;
  s.spec = spec;
  s.algorithm = std::move(algorithm);
  s.ranks.resize(static_cast<std::size_t>(std::max(spec.world_size, 0)));
  return s;
}

int Schedule::num_channels() const {
  int highest = -1;
  for (const Program& p : ranks)
    for (const Op& op : p.ops)
      highest = std::max(highest, static_cast<int>(op.channel));
  return highest + 1;
}

int Schedule::num_network_channels() const {
  if (network_channels > 0) return network_channels;
  const int lanes = std::max(lanes_per_channel, 1);
  return std::max(1, (num_channels() + lanes - 1) / lanes);
}

std::size_t Schedule::num_ops() const {
  std::size_t n = 0;
  for (const Program& p : ranks)
    n += p.ops.size();
  return n;
}

namespace {

Op make_op(OpKind kind, int peer, int channel, Chunk src, Chunk dst) {
  Op op;
  op.kind = kind;
  op.peer = peer;
  op.channel = static_cast<std::uint16_t>(channel);
  op.src = src;
  op.dst = dst;
  return op;
}

}  // namespace

OpId ProgramBuilder::send(int peer, int channel, Chunk src, Deps deps) {
  return program_.add(make_op(OpKind::Send, peer, channel, src, {}), std::span(deps.begin(), deps.size()));
}
OpId ProgramBuilder::send(int peer, int channel, Chunk src, std::span<const OpId> deps) {
  return program_.add(make_op(OpKind::Send, peer, channel, src, {}), deps);
}
OpId ProgramBuilder::recv_reduce(int peer, int channel, Chunk src, Chunk dst, std::span<const OpId> deps) {
  return program_.add(make_op(OpKind::RecvReduce, peer, channel, src, dst), deps);
}
OpId ProgramBuilder::recv(int peer, int channel, Chunk dst, Deps deps) {
  return program_.add(make_op(OpKind::Recv, peer, channel, {}, dst), std::span(deps.begin(), deps.size()));
}
OpId ProgramBuilder::recv(int peer, int channel, Chunk dst, std::span<const OpId> deps) {
  return program_.add(make_op(OpKind::Recv, peer, channel, {}, dst), deps);
}
OpId ProgramBuilder::recv_reduce(int peer, int channel, Chunk src, Chunk dst, Deps deps) {
  return program_.add(make_op(OpKind::RecvReduce, peer, channel, src, dst),
                      std::span(deps.begin(), deps.size()));
}
OpId ProgramBuilder::copy(Chunk src, Chunk dst, Deps deps, int channel) {
  return program_.add(make_op(OpKind::Copy, -1, channel, src, dst), std::span(deps.begin(), deps.size()));
}
OpId ProgramBuilder::local_reduce(Chunk src, Chunk dst, Deps deps, int channel) {
  return program_.add(make_op(OpKind::LocalReduce, -1, channel, src, dst),
                      std::span(deps.begin(), deps.size()));
}

OpId ProgramBuilder::switch_reduce(int group, int channel, Chunk src, Chunk dst, Deps deps) {
  return program_.add(make_op(OpKind::SwitchReduce, group, channel, src, dst),
                      std::span(deps.begin(), deps.size()));
}
OpId ProgramBuilder::switch_store(int group, int channel, Chunk src, Chunk dst, Deps deps) {
  return program_.add(make_op(OpKind::SwitchStore, group, channel, src, dst),
                      std::span(deps.begin(), deps.size()));
}
OpId ProgramBuilder::switch_store(int group, int channel, Chunk src, Chunk dst, std::span<const OpId> deps) {
  return program_.add(make_op(OpKind::SwitchStore, group, channel, src, dst), deps);
}

std::string format_op(const Schedule& schedule, int rank, OpId id) {
  const Program& p = schedule.ranks.at(rank);
  const Op& op = p.ops.at(id);
  std::string text = fmt::format("rank {} op {}: {}", rank, id, to_string(op.kind));
  switch (op.kind) {
    case OpKind::Send:
      text += fmt::format(" {} -> {}", format_chunk(op.src), op.peer);
      break;
    case OpKind::Recv:
      text += fmt::format(" {} <- {}", format_chunk(op.dst), op.peer);
      break;
    case OpKind::RecvReduce:
      text += fmt::format(" {} = {} + recv from {}", format_chunk(op.dst), format_chunk(op.src), op.peer);
      break;
    case OpKind::Copy:
      text += fmt::format(" {} = {}", format_chunk(op.dst), format_chunk(op.src));
      break;
    case OpKind::LocalReduce:
      text += fmt::format(" {} += {}", format_chunk(op.dst), format_chunk(op.src));
      break;
    case OpKind::SwitchReduce:
      text += fmt::format(" {} = sum of group {}'s {}", format_chunk(op.dst), op.peer, format_chunk(op.src));
      break;
    case OpKind::SwitchStore:
      text += fmt::format(" group {}'s {} = {}", op.peer, format_chunk(op.dst), format_chunk(op.src));
      break;
  }
  text += fmt::format(" ch {}", op.channel);
  auto deps = p.deps_of(op);
  if (!deps.empty()) text += fmt::format(" after {}", fmt::join(deps, ","));
  return text;
}

SwitchGroups switch_groups(const Schedule& schedule) {
  SwitchGroups groups;
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
    const std::vector<Op>& ops = schedule.ranks[r].ops;
    for (OpId i = 0; i < ops.size(); ++i) {
      if (!is_switch(ops[i].kind)) continue;
      const std::uint64_t key =
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(ops[i].peer)) << 16) | ops[i].channel;
      groups[key][static_cast<int>(r)].push_back(i);
    }
  }
  return groups;
}

std::vector<std::vector<std::uint64_t>> switch_instance_elems(const Schedule& schedule) {
  return switch_instance_elems(schedule, switch_groups(schedule));
}

std::vector<std::vector<std::uint64_t>> switch_instance_elems(const Schedule& schedule,
                                                              const SwitchGroups& groups) {
  std::vector<std::vector<std::uint64_t>> out(schedule.ranks.size());
  if (groups.empty()) return out;
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r)
    out[r].assign(schedule.ranks[r].ops.size(), 0);
  std::vector<InstanceElems> totals;
  for (const auto& [key, members] : groups) {
    // Instance k: every member's k-th op, its total handed to each of those ops.
    totals.clear();
    for (const auto& [r, ops] : members) {
      totals.resize(std::max(totals.size(), ops.size()));
      for (std::size_t k = 0; k < ops.size(); ++k)
        totals[k].add(instance_chunk(schedule.ranks[r].ops[ops[k]]));
    }
    for (const auto& [r, ops] : members)
      for (std::size_t k = 0; k < ops.size(); ++k)
        out[r][ops[k]] = totals[k].total();
  }
  return out;
}

std::vector<std::uint64_t> switch_bytes_sent_per_rank(const Schedule& schedule) {
  std::vector<std::uint64_t> bytes(schedule.ranks.size(), 0);
  const std::uint64_t elem = dtype_size_bytes(schedule.spec.dtype);
  const auto instance_elems = switch_instance_elems(schedule);
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r) {
    for (std::size_t i = 0; i < instance_elems[r].size(); ++i) {
      const Op& op = schedule.ranks[r].ops[i];
      // A reduce reads this rank's copy of every member's chunk; a store sends its own.
      if (op.kind == OpKind::SwitchReduce) bytes[r] += instance_elems[r][i] * elem;
      if (op.kind == OpKind::SwitchStore) bytes[r] += op.src.count * elem;
    }
  }
  return bytes;
}

std::vector<std::uint64_t> bytes_sent_per_rank(const Schedule& schedule) {
  std::vector<std::uint64_t> bytes = switch_bytes_sent_per_rank(schedule);
  const std::uint64_t elem = dtype_size_bytes(schedule.spec.dtype);
  for (std::size_t r = 0; r < schedule.ranks.size(); ++r)
    for (const Op& op : schedule.ranks[r].ops)
      if (op.kind == OpKind::Send) bytes[r] += op.src.count * elem;
  return bytes;
}

std::string format_schedule_summary(const Schedule& s) {
  std::string text = fmt::format("{} {}: {}\n", s.algorithm, to_string(s.spec.collective), describe(s.spec));
  if (!s.params.empty()) {
    text += "params:";
    for (const auto& [k, v] : s.params)
      text += fmt::format(" {}={}", k, v);
    text += "\n";
  }
  const int world = s.world_size();
  const int channels = s.num_channels();
  for (int c = 0; c < channels; ++c) {
    // Distinct directed send edges of this channel, in first-use order per rank.
    std::vector<std::set<int>> next(world);
    std::set<std::pair<int, int>> edges;
    for (int r = 0; r < world; ++r)
      for (const Op& op : s.ranks[r].ops)
        if (op.kind == OpKind::Send && op.channel == c) next[r].insert(op.peer), edges.insert({r, op.peer});
    bool ring =
        world > 1 && std::all_of(next.begin(), next.end(), [](const auto& n) { return n.size() == 1; });
    std::vector<int> order;
    if (ring) {
      std::vector<bool> seen(world, false);
      for (int r = 0; !seen[r]; r = *next[r].begin())
        seen[r] = true, order.push_back(r);
      ring = static_cast<int>(order.size()) == world;
    }
    if (ring) {
      text += fmt::format("channel {}: {}\n", c, fmt::join(order, " "));
    } else {
      std::vector<std::string> items;
      for (auto [a, b] : edges)
        items.push_back(fmt::format("{}->{}", a, b));
      constexpr std::size_t kMaxEdges = 64;
      const std::size_t shown = std::min(items.size(), kMaxEdges);
      text += fmt::format("channel {}: {}{}\n", c,
                          fmt::join(items.begin(), items.begin() + static_cast<long>(shown), " "),
                          items.size() > shown ? fmt::format(" ... ({} edges)", items.size()) : "");
    }
  }
  return text;
}

std::string format_schedule_ops(const Schedule& s, int max_ranks) {
  std::string text;
  const int shown = max_ranks < 0 ? s.world_size() : std::min(max_ranks, s.world_size());
  for (int r = 0; r < shown; ++r) {
    text +=
        fmt::format("rank {} ({} ops, scratch {}):\n", r, s.ranks[r].ops.size(), s.ranks[r].scratch_count);
    for (OpId i = 0; i < s.ranks[r].ops.size(); ++i)
      text += "  " + format_op(s, r, i) + "\n";
  }
  return text;
}

}  // namespace cclab
