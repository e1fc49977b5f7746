#include "engine/model/compact_cost.hpp"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "engine/ir/passes.hpp"
#include "engine/model/pass_timing.hpp"
#include "engine/model/walk.hpp"

namespace cclab {
namespace {

// pass_connections(pass, add) calls add(from_member, to_member, ir_channel, elements) for every connection
// one pass's expansion would use, in the pass's member indices, with the elements the expansion sends on it
// (explicit passes: once per send), without expanding ring and tree passes. One overload per kind.
template <typename Add>
void pass_connections(const RingPass& ring, Add&& add) {
  const int n = ring.members();
  if (n < 2) return;
  for (int c = 0; c < ring.channels(); ++c) {
    auto slice = [&](int owner) {
      return partition(partition(ring.count, n, owner), ring.channels(), c).count;
    };
    std::uint64_t total = 0;
    for (int owner = 0; owner < n; ++owner)
      total += slice(owner);
    for (int i = 0; i < n; ++i) {
      const int member = ring.rings[c][i], next = ring.rings[c][(i + 1) % n];
      // Reduce-scatter sends every block but the member's own; the allgather every block but the next
      // member's (the one it receives last).
      add(member, next, c,
          (ring.reduce_scatter ? total - slice(member) : 0) + (ring.allgather ? total - slice(next) : 0));
    }
  }
}

template <typename Add>
void pass_connections(const TreePass& tree, Add&& add) {
  for (int c = 0; c < tree.channels(); ++c) {
    const Tree& t = tree.trees[c];
    const std::uint64_t slice = partition(tree.count, tree.channels(), c).count;
    for (std::size_t m = 0; m < t.parent.size(); ++m) {
      if (t.parent[m] < 0) continue;
      add(static_cast<int>(m), t.parent[m], 2 * c, slice);
      add(t.parent[m], static_cast<int>(m), 2 * c + 1, slice);
    }
  }
}

// Local rank m of each node sends its part up to its parent node's and receives the sum back.
template <typename Add>
void pass_connections(const NvlsTreePass& nt, Add&& add) {
  const int g = nt.gpus_per_node;
  for (int c = 0; c < nt.channels(); ++c) {
    const MemberRounds pipe = member_rounds(nt.count, g, nt.channels(), c, nt.round_elems);
    const Tree& t = nt.trees[c];
    for (int n = 0; n < nt.nodes(); ++n) {
      if (t.parent[n] < 0) continue;
      for (int m = 0; m < g; ++m) {
        const std::uint64_t part = pipe.part(m).count;
        if (part == 0) continue;
        add(n * g + m, t.parent[n] * g + m, 4 * c + 1, part);
        add(t.parent[n] * g + m, n * g + m, 4 * c + 2, part);
      }
    }
  }
}

// Chain: each member sends the channel's part up to the one above it (2c) and the one above sends the result
// down (2c + 1), in every node. Direct: inside each node, member m sends each peer j its share of j's part
// (scatter) and the result of its own part back (gather), each pair and direction on IR channels of its own.
// Nvls: none.
template <typename Add>
void pass_connections(const SharpPass& sp, Add&& add) {
  const int g = sp.gpus_per_node;
  if (sp.intra == SharpIntra::Chain) {
    for (int c = 0; c < sp.channels(); ++c) {
      const std::uint64_t part = sp.chain_part(c).count;
      const std::vector<int>& chain = sp.chains[c];
      for (int n = 0; n < sp.nodes; ++n) {
        for (int i = 1; i < g; ++i) {
          add(n * g + chain[i], n * g + chain[i - 1], 2 * c, part);
          add(n * g + chain[i - 1], n * g + chain[i], 2 * c + 1, part);
        }
      }
    }
    return;
  }
  if (sp.intra != SharpIntra::Direct) return;
  for (int c = 0; c < sp.channels(); ++c) {
    const MemberRounds pipe = member_rounds(sp.count, g, sp.channels(), c, sp.round_elems);
    for (int n = 0; n < sp.nodes; ++n) {
      for (int m = 0; m < g; ++m) {
        for (int j = 0; j < g; ++j) {
          if (j == m) continue;
          if (const std::uint64_t theirs = pipe.part(j).count; theirs > 0)
            add(n * g + m, n * g + j, sp.scatter_channel(c, m, j), theirs);
          if (const std::uint64_t own = pipe.part(m).count; own > 0)
            add(n * g + m, n * g + j, sp.gather_channel(c, m, j), own);
        }
      }
    }
  }
}

// The switch carries it all: no point-to-point connection.
template <typename Add>
void pass_connections(const NvlsPass&, Add&&) {}

template <typename Add>
void pass_connections(const ExplicitPass& x, Add&& add) {
  const Schedule& programs = x.programs;
  for (int a = 0; a < programs.world_size(); ++a)
    for (const Op& op : programs.ranks[a].ops)
      if (op.kind == OpKind::Send) add(a, op.peer, static_cast<int>(op.channel), op.src.count);
}

// Every kind's: a kind without an overload above fails to compile here.
template <typename Add>
void for_each_pass_connection(const Pass& pass, Add&& add) {
  std::visit([&](const auto& kind) { pass_connections(kind, add); }, pass);
}

// The same for the whole schedule, in global ranks.
template <typename Add>
void for_each_connection(const CompactSchedule& s, Add&& add) {
  for (const Phase& phase : s.phases()) {
    for (const Lane& lane : phase.lanes) {
      const auto& g = lane.ranks;
      for_each_pass_connection(*lane.pass, [&](int a, int b, int channel, std::uint64_t elements) {
        add(g[a], g[b], channel, elements);
      });
    }
  }
}

// Calls port(member, ir_channel, up_elements, down_elements, across_nodes) with what a compact pass's switch
// ops move through each member's port, summed over the rounds (add_switch_ports' sums, without the ops): a
// reduce sends up its copy of every member's part and takes its own back, a multicast the reverse; a SHARP
// reduce (across_nodes: its group is local rank m of every node) sends its node's sum of its part and takes
// the network's back. Ring, tree and explicit passes: none here (explicit lanes declare theirs from the ops).
template <typename Port>
void for_each_switch_port(const Pass& pass, Port&& port) {
  // The node's in-switch reduce of each round: local rank m's part of every member's vector. NVLSTree reduces
  // and multicasts in the node around its tree; SHARP with NVLS inside the node does both and the network's
  // reduce between; SHARP with direct messages only the network's.
  const auto node_rounds = [&](std::uint64_t count, std::uint64_t round_elems, int g, int channels,
                               int members, auto&& member_ports) {
    for (int c = 0; c < channels; ++c) {
      const MemberRounds pipe = member_rounds(count, g, channels, c, round_elems);
      if (pipe.rounds == 0) continue;  // nothing to reduce: no switch ops
      std::uint64_t node_part =
          0;  // every local rank's part: what one in-switch reduce reads across the node
      for (int m = 0; m < g; ++m)
        node_part += pipe.part(m).count;
      for (int member = 0; member < members; ++member)
        member_ports(member, c, node_part, pipe.part(member % g).count);
    }
  };
  std::visit(PassHandlers{
                 [&](const NvlsPass& nv) {        // a reduce and/or a multicast on IR channel c
                   if (nv.members() < 2) return;  // one member copies
                   for (int c = 0; c < nv.channels(); ++c) {
                     if (nv.rounds(c) == 0) continue;
                     std::uint64_t all = 0;  // every member's part: what one reduce reads across the domain
                     for (int m = 0; m < nv.members(); ++m)
                       all += nv.part(m, c).count;
                     for (int m = 0; m < nv.members(); ++m) {
                       const std::uint64_t own = nv.part(m, c).count;
                       port(m, c, (nv.reduce ? all : 0) + (nv.store ? own : 0),
                            (nv.reduce ? own : 0) + (nv.store ? all : 0), false);
                     }
                   }
                 },
                 [&](const NvlsTreePass& nt) {
                   node_rounds(nt.count, nt.round_elems, nt.gpus_per_node, nt.channels(), nt.members(),
                               [&](int member, int c, std::uint64_t node_part, std::uint64_t own) {
                                 port(member, 4 * c, node_part, own, false);
                                 port(member, 4 * c + 3, own, node_part, false);
                               });
                 },
                 [&](const SharpPass& sp) {
                   if (sp.intra ==
                       SharpIntra::Chain) {  // the head of each node sends the chain's sum, takes the result
                     for (int c = 0; c < sp.channels(); ++c)
                       for (int n = 0; n < sp.nodes; ++n)
                         port(n * sp.gpus_per_node + sp.chains[c][0], sp.network_channel(c),
                              sp.chain_part(c).count, sp.chain_part(c).count, true);
                     return;
                   }
                   node_rounds(
                       sp.count, sp.round_elems, sp.gpus_per_node, sp.channels(), sp.members(),
                       [&](int member, int c, std::uint64_t node_part, std::uint64_t own) {
                         if (sp.intra == SharpIntra::Nvls) {
                           port(member, 2 * c, node_part + own, own + node_part, false);  // reduce, multicast
                           port(member, sp.network_channel(c), own, own, true);
                         } else if (own > 0) {  // Direct: SHARP reduces on rounds that move the member's part
                           port(member, sp.network_channel(c), own, own, true);
                         }
                       });
                 },
                 // Ring, tree and explicit passes: none here (explicit lanes declare theirs from the ops).
                 [](const RingPass&) {}, [](const TreePass&) {}, [](const ExplicitPass&) {}},
             pass);
}

bool has_switch_ops(const Pass& pass) {
  return std::visit(
      PassHandlers{[](const NvlsTreePass&) { return true; }, [](const SharpPass&) { return true; },
                   [](const NvlsPass& nv) { return nv.members() > 1; }, [](const RingPass&) { return false; },
                   [](const TreePass&) { return false; },
                   [](const ExplicitPass& x) {
                     for (const Program& p : x.programs.ranks)
                       for (const Op& op : p.ops)
                         if (is_switch(op.kind)) return true;
                     return false;
                   }},
      pass);
}

// An explicit lane, walked from its members' ready times.
std::vector<double> walk_lane(const ExplicitPass& pass, const Lane& lane, std::span<const double> ready,
                              const ConnectionCosts* costs, const CostParams& params) {
  const Schedule& programs = pass.programs;
  const WalkFrame frame{lane.ranks, ready};
  const RunResult run =
      costs ? walk_alpha_beta(programs, *costs, params, frame) : walk_steps(programs, frame);
  std::vector<double> end(ready.begin(), ready.end());
  for (std::size_t m = 0; m < end.size(); ++m)
    end[m] = std::max(end[m], run.rank_end_s[m]);
  return end;
}

// A lane of an NVLSTree or SHARP pass, walked channel by channel from its members' ready times. Its channels
// share no op, no dep and no connection (channel c has IR channels of its own: per_channel of them, from
// c·per_channel), and ConnectionCosts fixes every share of a link or port up front, so a member ends when its
// last channel does; channels that do the same work (`alike`: the same parts and rounds, NVLSTree's the same
// tree too) at the same costs end alike, and only the first of each kind is walked: NVLSTree's two trees, a
// SHARP pass's one channel in an even split, where the whole pass has C, in 1/C of the ops at a time.
template <typename P, typename Alike, typename ChannelOps, typename Expand>
std::vector<double> walk_channel_by_channel(const P& pass, const Lane& lane, const CollectiveSpec& spec,
                                            int per_channel, std::span<const double> ready,
                                            const ConnectionCosts* costs, const CostParams& params,
                                            Alike&& alike, ChannelOps&& channel_ops, Expand&& expand) {
  const int members = pass.members();
  const std::string_view name = pass_name(*lane.pass);
  // Whether channel b costs what channel a does: every connection and switch port of a, moved to b's IR
  // channels, costs the same.
  auto same_costs = [&](int a, int b) {
    if (!costs) return true;
    const int first = a * per_channel, shift = (b - a) * per_channel;
    auto ours = [&](int channel) { return channel >= first && channel < first + per_channel; };
    bool same = true;
    for_each_switch_port(*lane.pass, [&](int m, int channel, std::uint64_t, std::uint64_t, bool) {
      if (!same || !ours(channel)) return;
      const ConnectionCosts::SwitchPort& p = costs->switch_port(lane.ranks[m], channel);
      const ConnectionCosts::SwitchPort& q = costs->switch_port(lane.ranks[m], channel + shift);
      same = p.latency_s == q.latency_s && p.up_Bps == q.up_Bps && p.down_Bps == q.down_Bps;
    });
    for_each_pass_connection(*lane.pass, [&](int x, int y, int channel, std::uint64_t) {
      if (!same || !ours(channel)) return;
      same = costs->at(lane.ranks[x], lane.ranks[y], channel) ==
             costs->at(lane.ranks[x], lane.ranks[y], channel + shift);
    });
    return same;
  };
  std::vector<double> end(ready.begin(), ready.end());
  std::vector<std::pair<int, std::vector<double>>> walked;  // (channel, its members' ends)
  CollectiveSpec sub = spec;
  sub.world_size = members;
  for (int c = 0; c < pass.channels(); ++c) {
    const std::uint64_t ops = channel_ops(c);
    if (ops == 0) continue;
    const std::vector<double>* ends = nullptr;
    for (const auto& [earlier, earlier_ends] : walked)
      if (alike(earlier, c) && same_costs(earlier, c)) {
        ends = &earlier_ends;
        break;
      }
    if (!ends) {
      require_within_memory_budget(
          ops * kExplicitBytesPerOp,
          fmt::format("walking channel {} of {} over {} ranks ({} ops)", c, name, members, ops),
          "a larger --chunk (fewer, larger rounds)");
      Schedule programs = empty_schedule(sub, std::string(name));
      programs.lanes_per_channel = per_channel;
      for (int m = 0; m < members; ++m)
        expand(m, programs.ranks[m], c);
      const WalkFrame frame{lane.ranks, ready};
      const RunResult run =
          costs ? walk_alpha_beta(programs, *costs, params, frame) : walk_steps(programs, frame);
      walked.emplace_back(c, run.rank_end_s);
      ends = &walked.back().second;
    }
    for (int m = 0; m < members; ++m)
      end[m] = std::max(end[m], (*ends)[m]);
  }
  return end;
}

std::vector<double> walk_nvls_tree_lane(const NvlsTreePass& nt, const Lane& lane, const CollectiveSpec& spec,
                                        std::span<const double> ready, const ConnectionCosts* costs,
                                        const CostParams& params) {
  return walk_channel_by_channel(
      nt, lane, spec, 4, ready, costs, params,
      [&](int a, int b) { return nvls_tree_channels_alike(nt, a, b); },
      [&](int c) { return nvls_tree_channel_ops(nt, c); },
      [&](int m, Program& program, int c) { expand_nvls_tree_pass(nt, m, program, c); });
}

std::vector<double> walk_nvls_lane(const NvlsPass& nv, const Lane& lane, const CollectiveSpec& spec,
                                   std::span<const double> ready, const ConnectionCosts* costs,
                                   const CostParams& params) {
  return walk_channel_by_channel(
      nv, lane, spec, 1, ready, costs, params, [&](int a, int b) { return nvls_channels_alike(nv, a, b); },
      [&](int c) { return nvls_channel_ops(nv, c); },
      [&](int m, Program& program, int c) { expand_nvls_pass(nv, m, program, c); });
}

// Whether every node of a SHARP lane sees what node 0 does: the same ready times and, member for member, the
// same cost on every connection and switch port. Nodes meet only in the SHARP instances, which start when
// their last member does and end when the slowest member's port is through, so alike nodes run alike.
bool sharp_nodes_alike(const SharpPass& sp, const Lane& lane, std::span<const double> ready,
                       const ConnectionCosts* costs) {
  const int g = sp.gpus_per_node;
  for (std::size_t x = 0; x < ready.size(); ++x)
    if (ready[x] != ready[x % g]) return false;
  if (!costs) return true;
  bool same = true;
  for_each_switch_port(*lane.pass, [&](int m, int channel, std::uint64_t, std::uint64_t, bool) {
    if (!same || m < g) return;
    const ConnectionCosts::SwitchPort& p = costs->switch_port(lane.ranks[m], channel);
    const ConnectionCosts::SwitchPort& q = costs->switch_port(lane.ranks[m % g], channel);
    same = p.latency_s == q.latency_s && p.up_Bps == q.up_Bps && p.down_Bps == q.down_Bps;
  });
  for_each_pass_connection(*lane.pass, [&](int x, int y, int channel, std::uint64_t) {
    if (!same || x < g) return;
    same = costs->at(lane.ranks[x], lane.ranks[y], channel) ==
           costs->at(lane.ranks[x % g], lane.ranks[y % g], channel);
  });
  return same;
}

// A SHARP lane, channel by channel; where its nodes are alike (uniform nodes and fabric), node 0 alone, each
// SHARP group being its one member there: the other nodes end as it does.
std::vector<double> walk_sharp_lane(const SharpPass& sp, const Lane& lane, const CollectiveSpec& spec,
                                    std::span<const double> ready, const ConnectionCosts* costs,
                                    const CostParams& params) {
  auto walk = [&](const SharpPass& pass, const Lane& on, std::span<const double> from) {
    return walk_channel_by_channel(
        pass, on, spec, pass.ir_channels_per_channel(), from, costs, params,
        [&](int a, int b) { return sharp_channels_alike(pass, a, b); },
        [&](int c) { return sharp_channel_ops(pass, c); },
        [&](int m, Program& program, int c) { expand_sharp_pass(pass, m, program, c); });
  };
  if (sp.nodes < 2 || !sharp_nodes_alike(sp, lane, ready, costs)) return walk(sp, lane, ready);
  const int g = sp.gpus_per_node;
  SharpPass one = sp;
  one.nodes = 1;
  Lane node0{{lane.ranks.begin(), lane.ranks.begin() + g},
             lane.input,
             lane.output,
             std::make_shared<const Pass>(one)};
  const std::vector<double> ends = walk(one, node0, ready.first(g));
  std::vector<double> end(ready.size());
  for (std::size_t x = 0; x < end.size(); ++x)
    end[x] = ends[x % g];
  return end;
}

// Lanes that share a pass (the leader's 2,048 intra-node reductions, hierarchical's 2,048 intra-node rings)
// often see the same thing: the same ready times up to a shift and the same cost on every connection
// (member, peer, channel) and switch port (member, channel). The walk and the ring recurrence are max and +
// of those, so the ends are the first lane's shifted alike (to rounding): time once, reuse.
class LaneMemo {
 public:
  explicit LaneMemo(const ConnectionCosts* costs) : costs_(costs) {}

  // The ends of a lane that matches the pass's walked one, or nullopt.
  std::optional<std::vector<double>> find(const Lane& lane, std::span<const double> ready) {
    const auto it = walked_.find(lane.pass.get());
    if (it == walked_.end()) return std::nullopt;
    const Walked& w = it->second;
    const double shift = ready.empty() ? 0.0 : ready[0] - w.ready[0];
    for (std::size_t m = 0; m < ready.size(); ++m)
      if (ready[m] - ready[0] != w.ready[m] - w.ready[0]) return std::nullopt;
    if (costs_) {
      for (std::size_t i = 0; i < w.connections.size(); ++i) {
        const auto [a, b, c] = w.connections[i];
        const ConnectionCost& x = costs_->at(lane.ranks[a], lane.ranks[b], c);
        if (x != w.costs[i]) return std::nullopt;
      }
      for (std::size_t i = 0; i < w.ports.size(); ++i) {
        const auto [m, c] = w.ports[i];
        const ConnectionCosts::SwitchPort& x = costs_->switch_port(lane.ranks[m], c);
        const ConnectionCosts::SwitchPort& y = w.port_costs[i];
        if (x.latency_s != y.latency_s || x.up_Bps != y.up_Bps || x.down_Bps != y.down_Bps)
          return std::nullopt;
      }
    }
    std::vector<double> end(w.end);
    for (double& e : end)
      e += shift;
    return end;
  }

  void remember(const Lane& lane, std::span<const double> ready, const std::vector<double>& end) {
    Walked w{{ready.begin(), ready.end()}, end, {}, {}, {}, {}};
    for_each_pass_connection(*lane.pass, [&](int a, int b, int channel, std::uint64_t) {
      w.connections.emplace_back(a, b, channel);
    });
    std::sort(w.connections.begin(), w.connections.end());
    w.connections.erase(std::unique(w.connections.begin(), w.connections.end()), w.connections.end());
    if (const auto* x = std::get_if<ExplicitPass>(lane.pass.get())) {
      for (int m = 0; m < x->members(); ++m)
        for (const Op& op : x->programs.ranks[m].ops)
          if (is_switch(op.kind)) w.ports.emplace_back(m, static_cast<int>(op.channel));
      std::sort(w.ports.begin(), w.ports.end());
      w.ports.erase(std::unique(w.ports.begin(), w.ports.end()), w.ports.end());
    } else {
      for_each_switch_port(
          *lane.pass, [&](int m, int c, std::uint64_t, std::uint64_t, bool) { w.ports.emplace_back(m, c); });
    }
    if (costs_) {
      for (const auto& [a, b, c] : w.connections)
        w.costs.push_back(costs_->at(lane.ranks[a], lane.ranks[b], c));
      for (const auto& [m, c] : w.ports)
        w.port_costs.push_back(costs_->switch_port(lane.ranks[m], c));
    }
    walked_.insert_or_assign(lane.pass.get(), std::move(w));
  }

 private:
  struct Walked {
    std::vector<double> ready, end;
    std::vector<std::tuple<int, int, int>> connections;  // (member, peer, IR channel)
    std::vector<ConnectionCost> costs;
    std::vector<std::pair<int, int>> ports;  // (member, IR channel) of switch ops
    std::vector<ConnectionCosts::SwitchPort> port_costs;
  };
  const ConnectionCosts* costs_;
  std::unordered_map<const Pass*, Walked> walked_;
};

// The rank end times of the whole schedule, phase by phase: a lane starts from its members' ends so far.
std::vector<double> time_schedule(const CompactSchedule& s, const ConnectionCosts* costs,
                                  const CostParams& params, double start_s = 0) {
  std::vector<double> rank_end(static_cast<std::size_t>(s.world_size()), start_s);
  const PassTimingModel pass_model{costs, params, static_cast<double>(dtype_size_bytes(s.spec.dtype))};
  LaneMemo memo(costs);
  // Only passes that several lanes run are worth remembering (a 16,384-member tree's connections are not).
  std::unordered_map<const Pass*, int> lanes_of_pass;
  for (const Phase& phase : s.phases())
    for (const Lane& lane : phase.lanes)
      ++lanes_of_pass[lane.pass.get()];
  std::vector<double> ready;
  for (const Phase& phase : s.phases()) {
    for (const Lane& lane : phase.lanes) {
      ready.resize(lane.ranks.size());
      for (std::size_t m = 0; m < ready.size(); ++m)
        ready[m] = rank_end[lane.ranks[m]];
      std::vector<double> end;
      const bool shared = lanes_of_pass[lane.pass.get()] > 1;
      if (auto reused = shared ? memo.find(lane, ready) : std::nullopt) {
        end = std::move(*reused);
      } else {
        end = std::visit(
            PassHandlers{
                [&](const RingPass& ring) { return time_ring_pass(ring, lane.ranks, ready, pass_model); },
                [&](const TreePass& tree) { return time_tree_pass(tree, lane.ranks, ready, pass_model); },
                [&](const NvlsTreePass& nt) {
                  return walk_nvls_tree_lane(nt, lane, s.spec, ready, costs, params);
                },
                [&](const SharpPass& sp) { return walk_sharp_lane(sp, lane, s.spec, ready, costs, params); },
                [&](const NvlsPass& nv) { return walk_nvls_lane(nv, lane, s.spec, ready, costs, params); },
                [&](const ExplicitPass& x) { return walk_lane(x, lane, ready, costs, params); }},
            *lane.pass);
        if (shared) memo.remember(lane, ready, end);
      }
      for (std::size_t m = 0; m < end.size(); ++m)
        rank_end[lane.ranks[m]] = end[m];
    }
  }
  return rank_end;
}

// How many channels of a tree pass differ in shape: child counts in breadth-first order from the root, and
// the slice.
std::uint64_t tree_shapes(const TreePass& tree) {
  std::vector<std::vector<std::uint64_t>> shapes;
  for (int c = 0; c < tree.channels(); ++c) {
    const Tree& t = tree.trees[c];
    std::vector<std::uint64_t> shape{partition(tree.count, tree.channels(), c).count};
    std::vector<int> order{t.root};
    for (std::size_t i = 0; i < order.size(); ++i) {
      shape.push_back(t.children[order[i]].size());
      order.insert(order.end(), t.children[order[i]].begin(), t.children[order[i]].end());
    }
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(std::move(shape));
  }
  return shapes.size();
}

// A compact lane's switch ports (for_each_switch_port). A group reduces in the network where its members span
// nodes, as in_network_groups decides for explicit lanes: a SHARP group is local rank m of every node, an
// in-switch group the members of one node.
void declare_switch_ports(const Pass& pass, const Lane& lane, ConnectionCosts& costs, std::uint64_t elem) {
  const topo::Topology& t = costs.topology();
  // NVLSTree and SHARP: a SHARP group (across) spans nodes where local rank m's ranks are on several, an
  // in-switch group where node n's members are.
  const auto node_groups = [&](int g, int nodes) {
    auto node = [&](int n, int m) { return t.node_of_rank(lane.ranks[n * g + m]); };
    std::vector<std::uint8_t> sharp_spans(g, 0), node_spans(nodes, 0);
    for (int n = 0; n < nodes; ++n)
      for (int m = 0; m < g; ++m) {
        sharp_spans[m] |= node(n, m) != node(0, m);
        node_spans[n] |= node(n, m) != node(n, 0);
      }
    for_each_switch_port(pass, [&](int m, int c, std::uint64_t up, std::uint64_t down, bool across) {
      const bool in_network = across ? sharp_spans[m % g] != 0 : node_spans[m / g] != 0;
      costs.add_switch(lane.ranks[m], c, up * elem, down * elem, in_network);
    });
  };
  std::visit(PassHandlers{[&](const NvlsPass&) {  // one group, its members: in the network if they span nodes
                            bool spans = false;
                            for (const int r : lane.ranks)
                              spans = spans || t.node_of_rank(r) != t.node_of_rank(lane.ranks.front());
                            for_each_switch_port(
                                pass, [&](int m, int c, std::uint64_t up, std::uint64_t down, bool) {
                                  costs.add_switch(lane.ranks[m], c, up * elem, down * elem, spans);
                                });
                          },
                          [&](const NvlsTreePass& nt) { node_groups(nt.gpus_per_node, nt.nodes()); },
                          [&](const SharpPass& sp) { node_groups(sp.gpus_per_node, sp.nodes); },
                          [](const RingPass&) {}, [](const TreePass&) {},
                          [&](const ExplicitPass& x) {  // from its switch ops
                            add_switch_ports(x.programs, costs, WalkFrame{lane.ranks, {}});
                          }},
             pass);
}

}  // namespace

CostWork estimate_cost_work(const CompactSchedule& s) {
  CostWork work;
  std::unordered_set<std::uint64_t> pairs;  // routes are per rank pair, whatever the channel
  for_each_connection(s, [&](int a, int b, int, std::uint64_t) {
    pairs.insert((static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b));
  });
  work.routes = pairs.size();
  for (const Phase& phase : s.phases()) {
    for (const Lane& lane : phase.lanes) {
      std::visit(
          PassHandlers{[&](const RingPass& ring) {
                         const std::uint64_t n = ring.members(), halves = (ring.reduce_scatter ? 1 : 0) +
                                                                          (ring.allgather ? 1 : 0);
                         // Equal blocks (the count divides by the members, or unequal ones averaged past the
                         // cell budget) let the recurrence skip its steady state
                         // (engine/model/ring_timing.cpp), which the presets reach within a node's period of
                         // steps; 32 steps per phase is the bound this estimate assumes.
                         const std::uint64_t full = ring.channels() * n * n * ring.rounds() * halves;
                         const bool skips = ring.count % std::max<std::uint64_t>(n, 1) == 0 ||
                                            full > CostParams{}.ring_exact_cells;
                         work.ring_cells += skips ? ring.channels() * n * std::min<std::uint64_t>(n, 32) *
                                                        ring.rounds() * halves
                                                  : full;
                       },
                       [&](const TreePass& tree) {
                         // One cell per (member, chunk, channel), each a few transfers up and down; channels
                         // of one shape (the same child counts breadth first and the same slice: a DGX
                         // fabric's trees over shifted local ranks) are timed once where their costs agree
                         // too (engine/model/tree_timing.cpp), as they do on uniform fabrics, so those count
                         // once.
                         work.tree_cells +=
                             static_cast<std::uint64_t>(tree.members()) * tree.rounds() * tree_shapes(tree);
                       },
                       [&](const NvlsTreePass& nt) { work.walked_ops += nvls_tree_walked_ops(nt); },
                       [&](const SharpPass& sp) { work.walked_ops += sharp_walked_ops(sp); },
                       [&](const NvlsPass& nv) { work.walked_ops += nvls_walked_ops(nv); },
                       [&](const ExplicitPass& x) { work.walked_ops += x.programs.num_ops(); }},
          *lane.pass);
    }
  }
  return work;
}

std::vector<std::uint64_t> compact_bytes_sent(const CompactSchedule& s) {
  std::vector<std::uint64_t> bytes(static_cast<std::size_t>(s.world_size()), 0);
  const std::uint64_t elem = dtype_size_bytes(s.spec.dtype);
  for_each_connection(s, [&](int a, int, int, std::uint64_t elements) { bytes[a] += elements * elem; });
  // Switch ops send up to the switch, not to a peer: counted from the explicit lanes that have them.
  for (const Phase& phase : s.phases()) {
    for (const Lane& lane : phase.lanes) {
      if (!has_switch_ops(*lane.pass)) continue;
      if (const auto* x = std::get_if<ExplicitPass>(lane.pass.get())) {  // from its switch ops
        const std::vector<std::uint64_t> lane_bytes = switch_bytes_sent_per_rank(x->programs);
        for (std::size_t m = 0; m < lane_bytes.size(); ++m)
          bytes[lane.ranks[m]] += lane_bytes[m];
        continue;
      }
      for_each_switch_port(*lane.pass, [&](int m, int, std::uint64_t up, std::uint64_t, bool) {
        bytes[lane.ranks[m]] += up * elem;
      });
    }
  }
  return bytes;
}

std::vector<ProtocolRun> estimate_compact_cost_by_protocol(const CompactSchedule& s,
                                                           const topo::Topology& topology,
                                                           const CostParams& params) {
  // The recurrences time GPUs; ranks that are one CPU core each are timed by the explicit walk.
  if (params.one_core_per_rank) return estimate_cost_by_protocol(to_explicit(s), topology, params);
  if (static_cast<int>(topology.gpus().size()) < s.world_size()) {
    throw ConfigError(fmt::format("topology '{}' has {} GPUs, the schedule needs {}", topology.name(),
                                  topology.gpus().size(), s.world_size()));
  }
  ConnectionCosts costs(topology, s.params.lanes_per_channel,
                        algorithm_family(s.spec.collective, s.algorithm), s.spec.bytes(), s.spec.world_size);
  declare_connections(s, costs);
  costs.finish();
  const std::vector<std::uint64_t> bytes_sent = compact_bytes_sent(s);
  std::vector<ProtocolRun> runs;
  for (Protocol p : protocols_for(costs, params)) {
    costs.use_protocol(p);
    runs.push_back({p, time_compact(s, costs, params)});
    runs.back().run.bytes_sent = bytes_sent;
  }
  return runs;
}

std::vector<FlowGroup> phase_flow_groups(const CompactSchedule& s, int phase) {
  enum Group { Together, TreeUp, TreeDown, Scatter, Gather, Groups };
  std::vector<std::vector<std::pair<RankConnection, int>>> groups(Groups);
  int pipelines = 0;
  for (const Lane& lane : s.phases().at(phase).lanes) {
    const auto& g = lane.ranks;
    // How the lane's connections group: a tree's up and down lanes (CollNetChain's too), the scatter and
    // gather lanes of the other SHARP passes (only Direct has connections), or all together.
    enum class Flows { Together, Tree, Alternating };
    const Flows flows =
        std::visit(PassHandlers{[](const TreePass&) { return Flows::Tree; },
                                [](const SharpPass& sp) {
                                  return sp.intra == SharpIntra::Chain ? Flows::Tree : Flows::Alternating;
                                },
                                [](const RingPass&) { return Flows::Together; },
                                [](const NvlsTreePass&) { return Flows::Together; },
                                [](const NvlsPass&) { return Flows::Together; },
                                [](const ExplicitPass&) { return Flows::Together; }},
                   *lane.pass);
    const bool tree = flows == Flows::Tree, direct = flows == Flows::Alternating;
    const int first_pipeline = pipelines;
    for_each_pass_connection(*lane.pass, [&](int a, int b, int channel, std::uint64_t) {
      const Group group = tree     ? (channel % 2 == 0 ? TreeUp : TreeDown)
                          : direct ? (channel % 2 == 0 ? Scatter : Gather)
                                   : Together;
      const int pipeline = first_pipeline + (tree || direct ? channel / 2 : channel);
      pipelines = std::max(pipelines, pipeline + 1);
      groups[group].push_back({{g[a], g[b], channel}, pipeline});
    });
  }
  std::vector<FlowGroup> out;
  for (int group = 0; group < Groups; ++group) {
    auto& flows = groups[group];
    if (flows.empty()) continue;
    std::sort(flows.begin(), flows.end());
    flows.erase(std::unique(flows.begin(), flows.end()), flows.end());
    FlowGroup& fg = out.emplace_back();
    fg.tree = group == TreeUp || group == TreeDown;
    fg.alternating = group == Scatter || group == Gather;
    for (const auto& [c, pipeline] : flows) {
      fg.flows.push_back(c);
      fg.pipeline.push_back(pipeline);
    }
  }
  return out;
}

void declare_connections(const CompactSchedule& s, ConnectionCosts& costs) {
  const std::uint64_t elem = dtype_size_bytes(s.spec.dtype);
  for_each_connection(s, [&](int a, int b, int channel, std::uint64_t elements) {
    costs.add(a, b, channel, elements * elem);
  });
  for (const Phase& phase : s.phases())
    for (const Lane& lane : phase.lanes)
      declare_switch_ports(*lane.pass, lane, costs, elem);
}

RunResult time_compact(const CompactSchedule& s, const ConnectionCosts& costs, const CostParams& params) {
  RunResult result;
  // The launch cost delays every rank's first op.
  result.rank_end_s = time_schedule(s, &costs, per_channel_rates(params, s.num_channels()),
                                    costs.launches_s(s.params.kernels));
  for (double t : result.rank_end_s)
    result.total_s = std::max(result.total_s, t);
  result.total_s = std::max(result.total_s, costs.link_floor_s(s.params.kernels));
  return result;
}

RunResult estimate_compact_cost(const CompactSchedule& s, const topo::Topology& topology,
                                const CostParams& params) {
  return cheapest(estimate_compact_cost_by_protocol(s, topology, params)).run;
}

int count_compact_steps(const CompactSchedule& s) {
  const auto end = time_schedule(s, nullptr, CostParams{});
  return static_cast<int>(end.empty() ? 0 : *std::max_element(end.begin(), end.end()));
}

}  // namespace cclab
