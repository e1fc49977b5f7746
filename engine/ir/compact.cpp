#include "engine/ir/compact.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "engine/ir/passes.hpp"

namespace cclab {

int RingPass::rounds() const {
  if (rings.empty()) return 1;
  return chunk_rounds(partition(partition(count, members(), 0).count, channels(), 0).count, chunk_elems);
}

int TreePass::rounds() const {
  if (trees.empty()) return 1;
  return chunk_rounds(partition(count, channels(), 0).count, chunk_elems);
}

int SharpPass::chain_rounds() const {
  return chunk_rounds(partition(count, std::max(1, channels()), 0).count, round_elems);
}

ElemRange NvlsPass::part(int member, int channel) const {
  return partition(partition(ElemRange{0, count}, members(), member), channels(), channel);
}

namespace {
// Member 0's: its block is the largest of the balanced partition, and a channel's part of a balanced
// partition never shrinks as the block grows. O(1), so that a loaded pass of a million members costs nothing
// to count.
std::uint64_t longest_part(const NvlsPass& p, int channel) {
  return p.part(0, channel).count;
}
}  // namespace

std::uint64_t NvlsPass::round(int channel) const {
  return std::max<std::uint64_t>(1, round_elems == 0
                                        ? longest_part(*this, channel)
                                        : round_elems / static_cast<std::uint64_t>(std::max(1, members())));
}

std::uint64_t NvlsPass::rounds(int channel) const {
  const std::uint64_t per = round(channel);
  return (longest_part(*this, channel) + per - 1) / per;
}

int Tree::depth() const {
  // Depth of each node from its parent's, visiting parents first (a BFS from the root): O(n), not O(n·depth).
  // A member is visited once even when the lists are not a tree (a loaded file; the checks reject it later).
  std::vector<int> depth_of(parent.size(), -1);
  if (root < 0 || static_cast<std::size_t>(root) >= parent.size()) return 0;
  std::vector<int> queue{root};
  depth_of[root] = 0;
  int best = 0;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const int x = queue[q];
    for (int child : children[x]) {
      if (child < 0 || static_cast<std::size_t>(child) >= parent.size() || depth_of[child] >= 0) continue;
      depth_of[child] = depth_of[x] + 1;
      best = std::max(best, depth_of[child]);
      queue.push_back(child);
    }
  }
  return best;
}

Tree tree_from_parents(std::vector<int> parent) {
  Tree t;
  t.children.assign(parent.size(), {});
  for (std::size_t r = 0; r < parent.size(); ++r) {
    if (parent[r] < 0)
      t.root = static_cast<int>(r);
    else
      t.children[parent[r]].push_back(static_cast<int>(r));
  }
  t.parent = std::move(parent);
  return t;
}

std::string_view pass_name(const Pass& pass) {
  switch (pass.index()) {
    case 0:
      return "ring";
    case 1:
      return "tree";
    case 2:
      return "nvls_tree";
    case 3:
      switch (std::get<SharpPass>(pass).intra) {
        case SharpIntra::Nvls:
          return "nvls_sharp";
        case SharpIntra::Chain:
          return "collnet_chain";
        default:
          return "collnet";
      }
    case 4:
      return "nvls";
    default:
      return "explicit";
  }
}

std::uint64_t BufferPlace::offset_for(int member) const {
  return offset + (member_blocks > 0 ? partition(blocks_of, member_blocks, member).offset : 0);
}

CompactSchedule::CompactSchedule(CollectiveSpec s, std::string name) : spec(s), algorithm(std::move(name)) {}

void CompactSchedule::next_phase() {
  phases_.emplace_back();
  slots_.emplace_back(static_cast<std::size_t>(std::max(spec.world_size, 0)));
}

void CompactSchedule::add_lane(Lane lane) {
  if (phases_.empty()) next_phase();
  if (!lane.pass) throw PlanError("a lane without a pass");
  const int members = std::visit([](const auto& p) { return p.members(); }, *lane.pass);
  if (static_cast<int>(lane.ranks.size()) != members) {
    throw PlanError(fmt::format("a {} pass of {} members placed on {} ranks", pass_name(*lane.pass), members,
                                lane.ranks.size()));
  }
  const int phase = static_cast<int>(phases_.size()) - 1;
  const int index = static_cast<int>(phases_.back().lanes.size());
  for (int m = 0; m < members; ++m) {
    const int r = lane.ranks[m];
    if (r < 0 || r >= spec.world_size)
      throw PlanError(fmt::format("phase {} lane {}: member {} is rank {}, outside the world of {}", phase,
                                  index, m, r, spec.world_size));
    Slot& slot = slots_[phase][r];
    if (slot.lane >= 0)
      throw PlanError(fmt::format("phase {}: rank {} is in lanes {} and {}", phase, r, slot.lane, index));
    slot = Slot{index, m};
  }
  phases_.back().lanes.push_back(std::move(lane));
}

std::optional<CompactSchedule::Slot> CompactSchedule::slot(int phase, int rank) const {
  const Slot s = slots_.at(phase).at(rank);
  if (s.lane < 0) return std::nullopt;
  return s;
}

namespace {

// The typed parameters as the explicit form prints them.
void render_params(const CompactSchedule& s, Schedule& out) {
  out.params["chunk"] = std::to_string(s.params.chunk_bytes);
  // Network channels (what the α-β model splits a GPU's reduction rate by), as the typed field below says.
  out.params["channels"] = std::to_string(s.num_channels());
  if (s.params.lanes_per_channel != 1) out.params["lanes"] = std::to_string(s.params.lanes_per_channel);
  if (s.params.inter) out.params["inter"] = *s.params.inter;
  if (s.params.kernels != 1) out.params["kernels"] = std::to_string(s.params.kernels);
  out.lanes_per_channel = s.params.lanes_per_channel;
  out.kernels = s.params.kernels;
  out.network_channels = s.num_channels();
}

// IR channels a pass's expansion uses (1 + the highest).
int ir_channels(const Pass& pass) {
  return std::visit(
      PassHandlers{[](const RingPass& ring) { return ring.channels(); },
                   [](const TreePass& tree) { return 2 * tree.channels(); },
                   [](const NvlsTreePass& nt) { return 4 * nt.channels(); },
                   [](const SharpPass& sp) {
                     return static_cast<int>(std::min<long long>(
                         static_cast<long long>(sp.ir_channels_per_channel()) * sp.channels(), INT_MAX));
                   },
                   [](const NvlsPass& nv) {
                     // One member runs a copy on channel 0; channels without rounds have no ops.
                     if (nv.members() == 1) return nv.count > 0 ? 1 : 0;
                     int used = 0;
                     for (int c = 0; c < nv.channels(); ++c)
                       if (nv.rounds(c) > 0) used = c + 1;
                     return used;
                   },
                   [](const ExplicitPass& x) { return x.programs.num_channels(); }},
      pass);
}

}  // namespace

int CompactSchedule::num_ir_channels() const {
  int most = 0;
  for (const Phase& phase : phases_)
    for (const Lane& lane : phase.lanes)
      most = std::max(most, ir_channels(*lane.pass));
  return most;
}

int CompactSchedule::num_channels() const {
  if (params.channels) return *params.channels;
  return num_ir_channels() / std::max(1, params.lanes_per_channel);
}

Program expand(const CompactSchedule& s, int rank) {
  CCLAB_ENFORCE(rank >= 0 && rank < s.world_size(), "expand: rank {} outside the world of {}", rank,
                s.world_size());
  Program out;
  std::vector<OpId> barrier;  // sinks of this rank's previous phase with ops
  Program sub;
  std::vector<OpId> deps;
  std::vector<std::uint8_t> channel_started;
  std::vector<std::uint8_t> has_dependent;
  for (int phase = 0; phase < static_cast<int>(s.phases().size()); ++phase) {
    const auto slot = s.slot(phase, rank);
    if (!slot) continue;  // nothing here: the older barrier still holds
    const Lane& lane = s.phases()[phase].lanes[slot->lane];
    const int m = slot->member;
    sub = Program{};
    expand_pass(*lane.pass, m, sub);
    if (sub.ops.empty()) continue;

    const OpId base = static_cast<OpId>(out.ops.size());
    out.scratch_count = std::max(out.scratch_count, sub.scratch_count);
    out.ops.reserve(out.ops.size() + sub.ops.size());
    out.deps.reserve(out.deps.size() + sub.deps.size() + barrier.size() * 4);
    const std::uint64_t input_at = lane.input.offset_for(m), output_at = lane.output.offset_for(m);
    auto map_chunk = [&](Chunk c) {
      if (c.buffer == Buffer::Scratch) return c;  // phases share scratch
      const BufferPlace& at = c.buffer == Buffer::Input ? lane.input : lane.output;
      return Chunk{at.buffer, (c.buffer == Buffer::Input ? input_at : output_at) + c.offset, c.count};
    };
    channel_started.assign(1, 0);
    for (const Op& op : sub.ops) {
      deps.clear();
      for (OpId d : sub.deps_of(op))
        deps.push_back(base + d);
      if (op.channel >= channel_started.size()) channel_started.resize(op.channel + 1u, 0);
      // The first op on each channel, and every op without deps, waits for the previous phase.
      if (deps.empty() || !channel_started[op.channel])
        deps.insert(deps.end(), barrier.begin(), barrier.end());
      channel_started[op.channel] = 1;
      Op mapped = op;
      if (has_peer(op.kind)) mapped.peer = lane.ranks[static_cast<std::size_t>(op.peer)];
      mapped.src = map_chunk(op.src);
      mapped.dst = map_chunk(op.dst);
      out.add(mapped, deps);
    }
    // This phase's sinks: its ops that no op of the phase depends on.
    has_dependent.assign(sub.ops.size(), 0);
    for (const Op& op : sub.ops)
      for (OpId d : sub.deps_of(op))
        has_dependent[d] = 1;
    barrier.clear();
    for (OpId i = 0; i < sub.ops.size(); ++i)
      if (!has_dependent[i]) barrier.push_back(base + i);
  }
  return out;
}

Schedule to_explicit(const CompactSchedule& s) {
  const std::uint64_t ops = count_explicit_ops(s);
  require_within_memory_budget(
      ops * kExplicitBytesPerOp,
      fmt::format("the explicit form of {} {} on {} ranks ({} ops)", s.algorithm,
                  to_string(s.spec.collective), s.world_size(), ops),
      "use the compact form (cclab plan without --verify all), fewer ranks or channels, or a larger chunk");
  Schedule out = empty_schedule(s.spec, s.algorithm);
  for (int r = 0; r < s.world_size(); ++r)
    out.ranks[r] = expand(s, r);
  render_params(s, out);
  return out;
}

Schedule own_row(const CompactSchedule& s, int rank) {
  Schedule out = empty_schedule(s.spec, s.algorithm);
  out.ranks.at(static_cast<std::size_t>(rank)) = expand(s, rank);
  render_params(s, out);
  return out;
}

CompactSchedule one_lane(const CollectiveSpec& spec, std::string algorithm, Pass pass) {
  CompactSchedule s(spec, std::move(algorithm));
  Lane lane;
  lane.ranks.resize(static_cast<std::size_t>(std::max(0, spec.world_size)));
  for (int r = 0; r < spec.world_size; ++r)
    lane.ranks[r] = r;
  lane.pass = std::make_shared<const Pass>(std::move(pass));
  s.add_lane(std::move(lane));
  return s;
}

CompactSchedule from_explicit(Schedule schedule) {
  // A loaded file carries its parameters as text; they are read once, here (lanes by the JSON reader).
  PlanParams params;
  const auto& text = schedule.params;
  if (auto it = text.find("chunk"); it != text.end())
    params.chunk_bytes = std::strtoull(it->second.c_str(), nullptr, 10);
  params.lanes_per_channel = schedule.lanes_per_channel;
  if (schedule.network_channels > 0) params.channels = schedule.network_channels;
  params.kernels = schedule.kernels;
  if (auto it = text.find("inter"); it != text.end()) params.inter = it->second;
  const CollectiveSpec spec = schedule.spec;
  std::string algorithm = schedule.algorithm;
  CompactSchedule out = one_lane(spec, std::move(algorithm), ExplicitPass{std::move(schedule)});
  out.params = params;
  return out;
}

std::uint64_t count_explicit_ops(const CompactSchedule& s) {
  std::uint64_t total = 0;  // each term is at most kMaxOpCount; saturate the sum the same way
  for (const Phase& phase : s.phases())
    for (const Lane& lane : phase.lanes)
      total = std::min(total + pass_op_count(*lane.pass), kMaxOpCount);
  return total;
}

std::string format_compact_summary(const CompactSchedule& s, int max_items) {
  std::string text = fmt::format("{} {}: {}\n", s.algorithm, to_string(s.spec.collective), describe(s.spec));
  text += fmt::format("params: chunk={}{} channels={}", s.params.chunk_bytes,
                      s.params.chunk_bytes == 0 ? " (unchunked: one chunk per block)" : "", s.num_channels());
  if (s.params.lanes_per_channel != 1) text += fmt::format(" lanes={}", s.params.lanes_per_channel);
  if (s.params.inter) text += fmt::format(" inter={}", *s.params.inter);
  if (s.params.kernels != 1) text += fmt::format(" kernels={}", s.params.kernels);
  text += "\n";
  auto clipped = [&](const std::vector<int>& items) {
    const std::size_t shown = std::min<std::size_t>(items.size(), static_cast<std::size_t>(max_items));
    return fmt::format("{}{}", fmt::join(items.begin(), items.begin() + static_cast<long>(shown), " "),
                       items.size() > shown ? fmt::format(" ... ({} ranks)", items.size()) : "");
  };
  const bool several = s.phases().size() > 1;
  for (std::size_t p = 0; p < s.phases().size(); ++p) {
    const Phase& phase = s.phases()[p];
    if (several) text += fmt::format("phase {}: {} lane(s)\n", p, phase.lanes.size());
    // Lanes that share a pass print once, with the ranks of the first: one node's ring speaks for all.
    for (std::size_t l = 0; l < phase.lanes.size(); ++l) {
      const Lane& lane = phase.lanes[l];
      if (l > 0 && phase.lanes[l - 1].pass == lane.pass) continue;
      std::size_t same = 1;
      while (l + same < phase.lanes.size() && phase.lanes[l + same].pass == lane.pass)
        ++same;
      const std::string indent = several ? "  " : "";
      if (same > 1)
        text += fmt::format("{}lanes {}-{} run one {} pass, each on its own ranks; lane {}:\n", indent, l,
                            l + same - 1, pass_name(*lane.pass), l);
      auto global = [&](const std::vector<int>& members) {
        std::vector<int> out;
        out.reserve(members.size());
        for (int m : members)
          out.push_back(lane.ranks[m]);
        return out;
      };
      // The SHARP pass's chains, or its groups per local rank.
      auto sharp = [&](const SharpPass& sp) {
        if (sp.intra != SharpIntra::Chain) {
          text += fmt::format(
              "{}SHARP across {} nodes of {} GPUs, one group per local rank, {} inside each node, {} "
              "channels\n",
              indent, sp.nodes, sp.gpus_per_node, sp.intra == SharpIntra::Nvls ? "NVLS" : "direct messages",
              sp.channels());
          return;
        }
        text += fmt::format("{}SHARP across {} nodes of {} GPUs, a chain inside each node, {} channels:\n",
                            indent, sp.nodes, sp.gpus_per_node, sp.channels());
        int repeated = 0;  // channels whose chain an earlier channel has
        for (int c = 0; c < sp.channels(); ++c) {
          bool seen = false;
          for (int d = 0; d < c && !seen; ++d)
            seen = sp.chains[d] == sp.chains[c];
          if (seen) {
            ++repeated;
            continue;
          }
          std::vector<int> chain;  // node 0's ranks, the head first
          for (int m : sp.chains[c])
            chain.push_back(lane.ranks[m]);
          text += fmt::format("{}chain {}: head {} (its NIC to SHARP), then {}\n", indent, c, chain[0],
                              clipped(std::vector<int>(chain.begin() + 1, chain.end())));
        }
        if (repeated > 0)
          text += fmt::format("{}and {} more channels, each on one of these chains\n", indent, repeated);
      };
      auto nvls_tree = [&](const NvlsTreePass& nt) {
        // The trees are over nodes: a node is named by its first member's rank.
        const int g = nt.gpus_per_node;
        text += fmt::format("{}NVLS in each of {} nodes of {} GPUs, a tree of nodes per local rank:\n",
                            indent, nt.nodes(), g);
        int repeated = 0;  // channels whose tree an earlier channel has (NCCL's two trees, alternating)
        for (int c = 0; c < nt.channels(); ++c) {
          const Tree& t = nt.trees[c];
          bool seen = false;
          for (int d = 0; d < c && !seen; ++d)
            seen = nt.trees[d].parent == t.parent;
          if (seen) {
            ++repeated;
            continue;
          }
          std::vector<int> parents;
          for (std::size_t n = 0; n < t.parent.size(); ++n)
            parents.push_back(t.parent[n] < 0 ? -1 : lane.ranks[t.parent[n] * g]);
          text += fmt::format("{}tree {}: root {}, depth {}, node parents {}\n", indent, c,
                              lane.ranks[t.root * g], t.depth(), clipped(parents));
        }
        if (repeated > 0)
          text += fmt::format("{}and {} more channels, each on one of these trees\n", indent, repeated);
      };
      std::visit(PassHandlers{
                     [&](const RingPass& ring) {
                       for (int c = 0; c < ring.channels(); ++c)
                         text += fmt::format("{}channel {}: {}\n", indent, c, clipped(global(ring.rings[c])));
                     },
                     [&](const TreePass& tree) {
                       for (int c = 0; c < tree.channels(); ++c) {
                         const Tree& t = tree.trees[c];
                         std::vector<int> parents;
                         for (std::size_t m = 0; m < t.parent.size(); ++m)
                           parents.push_back(t.parent[m] < 0 ? -1 : lane.ranks[t.parent[m]]);
                         text += fmt::format("{}tree {}: root {}, depth {}, parents {}\n", indent, c,
                                             lane.ranks[t.root], t.depth(), clipped(parents));
                       }
                     },
                     nvls_tree, sharp,
                     [&](const NvlsPass& nv) {
                       text += fmt::format("{}NVLS on {}: {} in the switch, {} channels\n", indent,
                                           clipped(lane.ranks),
                                           nv.reduce && nv.store ? "reduce and multicast"
                                           : nv.reduce           ? "reduce"
                                                                 : "multicast",
                                           nv.channels());
                     },
                     [&](const ExplicitPass& x) {
                       text += fmt::format("{}explicit {} on {}: {} ops\n", indent, x.programs.algorithm,
                                           clipped(lane.ranks), x.programs.num_ops());
                     }},
                 *lane.pass);
    }
  }
  return text;
}

}  // namespace cclab
