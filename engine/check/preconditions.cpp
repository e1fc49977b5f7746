// The O(C·P) preconditions of ring, tree, NVLSTree, SHARP and NVLS passes, the lane placements, and the
// dispatch to the full verifier for explicit passes (engine/check/verified.hpp says what holds and why that
// suffices).
#include <climits>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "common/units.hpp"
#include "engine/check/verified.hpp"
#include "engine/check/verifier.hpp"
#include "engine/ir/passes.hpp"

namespace cclab {
namespace {

struct Extent {
  std::uint64_t begin = 0, end = 0;  // elements [begin, end) of a pass buffer
  void cover(std::uint64_t b, std::uint64_t e) {
    if (e <= b) return;
    if (end <= begin) begin = b, end = e;
    begin = std::min(begin, b), end = std::max(end, e);
  }
  bool empty() const { return end <= begin; }
};

// The parts of a pass's Input, Output and Scratch that member m touches.
struct Extents {
  Extent of[3];
  Extent& operator[](Buffer b) { return of[static_cast<int>(b)]; }
};

std::optional<std::string> check_ring(const RingPass& p) {
  const int n = p.members();
  if (p.channels() < 1) return "a ring pass without channels";
  if (!p.reduce_scatter && !p.allgather) return "a ring pass with neither reduce-scatter nor allgather";
  if (static_cast<int>(p.position.size()) != p.channels()) return "ring positions missing for some channels";
  for (int c = 0; c < p.channels(); ++c) {
    if (static_cast<int>(p.rings[c].size()) != n || static_cast<int>(p.position[c].size()) != n)
      return fmt::format("ring {} has {} members, the pass {}", c, p.rings[c].size(), n);
    for (int i = 0; i < n; ++i) {
      const int m = p.rings[c][i];
      if (m < 0 || m >= n || p.position[c][m] != i)
        return fmt::format("ring {} is not a permutation of the {} members (position {} holds {})", c, n, i,
                           m);
    }
  }
  const std::uint64_t slice = partition(partition(p.count, n, 0).count, p.channels(), 0).count;
  if (p.chunk_elems > 0 && (slice + p.chunk_elems - 1) / p.chunk_elems > INT_MAX)
    return fmt::format("{} pipeline chunks of {} elements per block slice: too many", slice / p.chunk_elems,
                       p.chunk_elems);
  return std::nullopt;
}

// Tree c spans members 0..n-1 from one root: children lists mirror the parents, and a walk from the root
// reaches every member exactly once.
std::optional<std::string> check_tree_shape(const Tree& t, int n, int c) {
  if (static_cast<int>(t.parent.size()) != n || static_cast<int>(t.children.size()) != n)
    return fmt::format("tree {} spans {} members, the pass {}", c, t.parent.size(), n);
  if (t.root < 0 || t.root >= n || t.parent[t.root] != -1)
    return fmt::format("tree {}: bad root {}", c, t.root);
  std::vector<std::uint8_t> seen(n, 0);
  std::vector<int> queue{t.root};
  seen[t.root] = 1;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    for (int child : t.children[queue[q]]) {
      if (child < 0 || child >= n || t.parent[child] != queue[q] || seen[child])
        return fmt::format("tree {}: member {} lists child {} whose parent is not it, or twice", c, queue[q],
                           child);
      seen[child] = 1;
      queue.push_back(child);
    }
  }
  if (static_cast<int>(queue.size()) != n)
    return fmt::format("tree {} reaches {} of {} members from its root", c, queue.size(), n);
  return std::nullopt;
}

std::optional<std::string> check_tree(const TreePass& p) {
  if (p.channels() < 1) return "a tree pass without channels";
  for (int c = 0; c < p.channels(); ++c)
    if (auto error = check_tree_shape(p.trees[c], p.members(), c)) return error;
  const std::uint64_t slice = partition(p.count, p.channels(), 0).count;
  if (p.chunk_elems > 0 && (slice + p.chunk_elems - 1) / p.chunk_elems > INT_MAX)
    return "too many pipeline chunks per slice";
  return std::nullopt;
}

// An NVLSTree pass: its trees span the nodes, and the rounds are countable. Each round's switch instance
// names the node's first member as its group and every member of the node takes part, which holds by
// construction of the expansion for any g >= 1.
std::optional<std::string> check_nvls_tree(const NvlsTreePass& p) {
  if (p.channels() < 1) return "an NVLSTree pass without channels";
  if (p.gpus_per_node < 1) return fmt::format("an NVLSTree pass with {} GPUs per node", p.gpus_per_node);
  for (int c = 0; c < p.channels(); ++c)
    if (auto error = check_tree_shape(p.trees[c], p.nodes(), c)) return "nodes' " + *error;
  const std::uint64_t per_member = partition(p.count, p.gpus_per_node, 0).count;
  const std::uint64_t round = std::max<std::uint64_t>(1, p.round_elems / p.gpus_per_node);
  if (p.round_elems > 0 && per_member / round > INT_MAX) return "too many rounds per channel";
  return std::nullopt;
}

// A SHARP pass: GPUs, nodes and channels, countable rounds, IR channels that fit an op's channel field. By
// construction of the expansion, the members of a SHARP group (local rank m of every node) run the same
// rounds of the same range in the same order on the network IR channel (MemberRounds depends on m and the
// channel only), and a node's members the same rounds of their switch instance or their messages to each
// other, so every instance finds all its members and every message its receive. A chain pass's members run
// the same rounds of their channel's part, its heads (one per node) the same SHARP instances, and each member
// meets the ones above and below it in its node's copy of the chain.
std::optional<std::string> check_sharp(const SharpPass& p) {
  if (p.channels() < 1) return "a SHARP pass without channels";
  if (p.gpus_per_node < 1 || p.nodes < 1)
    return fmt::format("a SHARP pass over {} nodes of {} GPUs", p.nodes, p.gpus_per_node);
  if (static_cast<long long>(p.ir_channels_per_channel()) * p.channels() > 65535)
    return fmt::format("{} channels of {} GPUs per node need more than 65,535 IR channels", p.channels(),
                       p.gpus_per_node);
  if (p.intra == SharpIntra::Chain) {
    // Every channel's chain is a permutation of the local ranks, so each member has one place in it.
    if (p.chains.size() != static_cast<std::size_t>(p.channels()))
      return fmt::format("a chain SHARP pass of {} channels has {} chains", p.channels(), p.chains.size());
    for (std::size_t c = 0; c < p.chains.size(); ++c) {
      std::vector<std::uint8_t> seen(p.gpus_per_node, 0);
      if (p.chains[c].size() != seen.size())
        return fmt::format("chain {} has {} local ranks, the nodes {}", c, p.chains[c].size(), seen.size());
      for (int m : p.chains[c])
        if (m < 0 || m >= p.gpus_per_node || seen[m]++)
          return fmt::format("chain {} is not a permutation of the {} local ranks", c, p.gpus_per_node);
    }
    const std::uint64_t part = partition(p.count, p.channels(), 0).count;
    if (p.round_elems > 0 && part / p.round_elems > INT_MAX) return "too many rounds per channel";
    return std::nullopt;
  }
  const std::uint64_t per_member = partition(p.count, p.gpus_per_node, 0).count;
  const std::uint64_t round = std::max<std::uint64_t>(1, p.round_elems / p.gpus_per_node);
  if (p.round_elems > 0 && per_member / round > INT_MAX) return "too many rounds per channel";
  return std::nullopt;
}

// An NVLS pass: members, channels that fit an op's channel field, countable rounds, and roles the switch can
// serve. Every member runs the same rounds on a channel (NvlsPass::rounds depends on the channel only), so
// every instance finds all its members; member m's ranges tile its block, so the reduces cover each block
// once and the multicasts deliver every block to every member. A multicast after a reduce sends what the
// reduce wrote; reduce sources and multicast destinations are full-vector places (the switch reads and writes
// the same offsets on every member); nothing is in scratch (the pass declares none).
std::optional<std::string> check_nvls(const NvlsPass& p) {
  if (p.members() < 1) return fmt::format("an NVLS pass of {} members", p.members());
  if (p.channels() < 1 || p.channels() > 65535)
    return fmt::format("an NVLS pass of {} channels (1 to 65,535)", p.channels());
  if (!p.reduce && !p.store) return "an NVLS pass with neither reduce nor multicast";
  for (const RolePlace* role : {&p.reduce_src, &p.reduce_dst, &p.store_src, &p.store_dst})
    if (role->buffer == Buffer::Scratch) return "an NVLS pass role in scratch";
  if (p.reduce_src.own_block_relative || p.store_dst.own_block_relative)
    return "an NVLS pass whose reduce source or multicast destination is a member's block alone (the switch "
           "reaches the same offsets on every member)";
  if (p.reduce && p.store && p.store_src != p.reduce_dst)
    return "an NVLS pass whose multicast sends something else than its reduce wrote";
  const std::uint64_t block = partition(p.count, p.members(), 0).count;
  const std::uint64_t round = std::max<std::uint64_t>(1, p.round_elems / p.members());
  if (p.round_elems > 0 && block / round > INT_MAX) return "too many rounds per channel";
  return std::nullopt;
}

Extents nvls_extents(const NvlsPass& p, int m) {
  Extents e;
  const std::uint64_t own = partition(p.count, p.members(), m).count;
  auto use = [&](const RolePlace& role) { e[role.buffer].cover(0, role.own_block_relative ? own : p.count); };
  if (p.members() == 1) {  // the copy
    use(RolePlace{Buffer::Input}), use(RolePlace{Buffer::Output});
    return e;
  }
  if (p.reduce) use(p.reduce_src), use(p.reduce_dst);
  if (p.store) use(p.store_src), use(p.store_dst);
  return e;
}

Extents ring_extents(const RingPass& p, int m) {
  Extents e;
  const std::uint64_t own = partition(p.count, p.members(), m).count;
  auto use = [&](const RolePlace& role) { e[role.buffer].cover(0, role.own_block_relative ? own : p.count); };
  if (p.reduce_scatter) use(p.contribution), use(p.reduced);
  if (p.reduce_scatter && p.members() > 1) use(p.partial);
  if (p.allgather) use(p.reduced), use(p.gathered);
  return e;
}

// Where a pass's input sits in its output (or the output in its input) when they share a buffer: the
// collective's in-place layout.
struct InPlace {
  bool input_inside_output;  // allgather: the member's block of the output
  std::uint64_t offset;
};
InPlace in_place_layout(const Pass& pass, int m) {
  // A reduce-scatter half alone writes the member's own block of its input; an allgather half alone reads
  // its input from that block of the output.
  const auto halves = [&](bool reduce_scatter, bool allgather, std::uint64_t count, int members) -> InPlace {
    const std::uint64_t own = partition(count, members, m).offset;
    if (reduce_scatter && !allgather) return {false, own};
    if (!reduce_scatter) return {true, own};
    return {true, 0};
  };
  const InPlace full_vector{true, 0};  // input and output both the whole vector
  return std::visit(
      PassHandlers{[&](const RingPass& ring) {
                     return halves(ring.reduce_scatter, ring.allgather, ring.count, ring.members());
                   },
                   [&](const NvlsPass& nv) { return halves(nv.reduce, nv.store, nv.count, nv.members()); },
                   [&](const TreePass&) { return full_vector; },
                   [&](const NvlsTreePass&) { return full_vector; },
                   [&](const SharpPass&) { return full_vector; },
                   [&](const ExplicitPass& x) {
                     const CollectiveSpec& spec = x.programs.spec;
                     return InPlace{!output_is_block(spec.collective), in_place_offset(spec, m)};
                   }},
      pass);
}

// The ranges a member's ops touch in the pass's input, output and scratch; an error where the pass's own
// declaration does not cover them.
std::optional<std::string> pass_extents(const Pass& pass, int m, Extents& e) {
  const auto full_vector = [&](std::uint64_t count) -> std::optional<std::string> {
    e[Buffer::Input].cover(0, count);
    e[Buffer::Output].cover(0, count);
    return std::nullopt;
  };
  return std::visit(
      PassHandlers{[&](const RingPass& ring) -> std::optional<std::string> {
                     e = ring_extents(ring, m);
                     if (!e[Buffer::Scratch].empty() && e[Buffer::Scratch].end > ring.scratch_count)
                       return fmt::format("member {} uses {} scratch elements, the pass declares {}", m,
                                          e[Buffer::Scratch].end, ring.scratch_count);
                     return std::nullopt;
                   },
                   [&](const TreePass& tree) { return full_vector(tree.count); },
                   [&](const NvlsTreePass& nt) { return full_vector(nt.count); },
                   [&](const SharpPass& sp) { return full_vector(sp.count); },
                   [&](const NvlsPass& nv) -> std::optional<std::string> {
                     e = nvls_extents(nv, m);
                     return std::nullopt;
                   },
                   [&](const ExplicitPass& x) -> std::optional<std::string> {
                     const CollectiveSpec& sub = x.programs.spec;
                     e[Buffer::Input].cover(0, input_count(sub, m));
                     e[Buffer::Output].cover(0, output_count(sub, m));
                     return std::nullopt;
                   }},
      pass);
}

std::optional<std::string> check_lane(const CompactSchedule& s, const Lane& lane) {
  const Pass& pass = *lane.pass;
  for (int m = 0; m < static_cast<int>(lane.ranks.size()); ++m) {
    const int r = lane.ranks[m];
    Extents e;
    if (auto error = pass_extents(pass, m, e)) return error;
    Extent global[2];  // the lane's input and output, in global elements
    for (Buffer b : {Buffer::Input, Buffer::Output}) {
      if (e[b].empty()) continue;
      const BufferPlace& at = b == Buffer::Input ? lane.input : lane.output;
      if (at.buffer == Buffer::Scratch) return fmt::format("member {}: a lane buffer placed in scratch", m);
      const std::uint64_t base = at.offset_for(m);
      const std::uint64_t size =
          at.buffer == Buffer::Input ? input_count(s.spec, r) : output_count(s.spec, r);
      if (base + e[b].end > size)
        return fmt::format("member {} (rank {}): {}[{}, {}) lies outside the rank's {} of {} elements", m, r,
                           to_string(at.buffer), base + e[b].begin, base + e[b].end, to_string(at.buffer),
                           size);
      global[b == Buffer::Input ? 0 : 1] = {base + e[b].begin, base + e[b].end};
    }
    if (lane.input.buffer == lane.output.buffer && !global[0].empty() && !global[1].empty() &&
        global[0].begin < global[1].end && global[1].begin < global[0].end) {
      const InPlace layout = in_place_layout(pass, m);
      const std::uint64_t in_at = lane.input.offset_for(m), out_at = lane.output.offset_for(m);
      const bool ok =
          layout.input_inside_output ? in_at == out_at + layout.offset : out_at == in_at + layout.offset;
      if (!ok)
        return fmt::format(
            "member {} (rank {}): the input at {}[{}] and the output at {}[{}] overlap outside "
            "the in-place layout",
            m, r, to_string(lane.input.buffer), in_at, to_string(lane.output.buffer), out_at);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_compact(const CompactSchedule& s, VerifyDepth depth) {
  if (s.world_size() < 1) return "the schedule has no ranks";
  if (depth == VerifyDepth::All) {
    const std::uint64_t ops = count_explicit_ops(s);
    require_within_memory_budget(
        ops * kExplicitBytesPerOp, fmt::format("verifying all {} ops of the explicit form", ops),
        "verify the compact form (drop --verify all), or use fewer ranks or channels");
    return verify(to_explicit(s));
  }
  std::set<const Pass*> checked;  // lanes share passes: check each once
  for (std::size_t p = 0; p < s.phases().size(); ++p) {
    const auto& lanes = s.phases()[p].lanes;
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      const Lane& lane = lanes[l];
      auto where = [&](const std::string& what) {
        return fmt::format("phase {} lane {} ({} pass): {}", p, l, pass_name(*lane.pass), what);
      };
      if (checked.insert(lane.pass.get()).second) {
        const std::optional<std::string> error =
            std::visit(PassHandlers{[](const RingPass& ring) { return check_ring(ring); },
                                    [](const TreePass& tree) { return check_tree(tree); },
                                    [](const NvlsTreePass& nt) { return check_nvls_tree(nt); },
                                    [](const SharpPass& sp) { return check_sharp(sp); },
                                    [](const NvlsPass& nv) { return check_nvls(nv); },
                                    [](const ExplicitPass& x) { return verify(x.programs); }},
                       *lane.pass);
        if (error) return where(*error);
      }
      if (auto error = check_lane(s, lane)) return where(*error);
    }
  }
  return std::nullopt;
}

VerifiedSchedule verify_compact(CompactSchedule schedule, VerifyDepth depth) {
  if (auto error = check_compact(schedule, depth)) throw PlanError(*error);
  return VerifiedSchedule(std::make_shared<const CompactSchedule>(std::move(schedule)), depth);
}

}  // namespace cclab
