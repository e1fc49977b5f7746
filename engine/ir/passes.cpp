#include "engine/ir/passes.hpp"

#include <algorithm>
#include <cstdint>

namespace cclab {
namespace {

// Whether channels a and b of a MemberRounds pipeline give every local rank the same part in the same rounds.
bool same_member_rounds(std::uint64_t count, int g, int channels, std::uint64_t round_elems, int a, int b) {
  const MemberRounds x = member_rounds(count, g, channels, a, round_elems);
  const MemberRounds y = member_rounds(count, g, channels, b, round_elems);
  if (x.rounds != y.rounds || x.round != y.round) return false;
  for (int m = 0; m < g; ++m)
    if (x.part(m).count != y.part(m).count) return false;
  return true;
}

// The ops of the first channel of each kind (alike(a, b): channels a and b do the same work).
template <typename Alike, typename Ops>
std::uint64_t ops_of_one_channel_per_kind(int channels, Alike&& alike, Ops&& ops) {
  std::uint64_t total = 0;
  for (int c = 0; c < channels; ++c) {
    bool seen = false;
    for (int earlier = 0; earlier < c && !seen; ++earlier)
      seen = alike(earlier, c);
    if (!seen) total = std::min(total + ops(c), kMaxOpCount);
  }
  return total;
}

}  // namespace

int chunk_rounds(std::uint64_t largest_block, std::uint64_t chunk_elems) {
  if (chunk_elems == 0 || largest_block <= chunk_elems) return 1;
  return static_cast<int>((largest_block + chunk_elems - 1) / chunk_elems);
}

void expand_pass(const Pass& pass, int member, Program& program) {
  std::visit(PassHandlers{[&](const RingPass& ring) { expand_ring_pass(ring, member, program); },
                          [&](const TreePass& tree) { expand_tree_pass(tree, member, program); },
                          [&](const NvlsTreePass& nt) { expand_nvls_tree_pass(nt, member, program); },
                          [&](const SharpPass& sp) { expand_sharp_pass(sp, member, program); },
                          [&](const NvlsPass& nv) { expand_nvls_pass(nv, member, program); },
                          [&](const ExplicitPass& x) { program = x.programs.ranks.at(member); }},
             pass);
}

namespace {

// The sum of channel_ops(c) over the channels, saturating.
template <typename ChannelOps>
std::uint64_t sum_over_channels(int channels, ChannelOps&& channel_ops) {
  std::uint64_t total = 0;
  for (int c = 0; c < channels; ++c)
    total = std::min(total + channel_ops(c), kMaxOpCount);
  return total;
}

std::uint64_t ring_op_count(const RingPass& ring) {
  const std::uint64_t world = ring.members(), rounds = ring.rounds();
  std::uint64_t per_channel = 0;  // ops of one member on one channel
  if (world == 1) {
    per_channel = rounds;
  } else {
    if (ring.reduce_scatter) per_channel += 2 * (world - 1) * rounds;
    if (ring.allgather) per_channel += 2 * (world - 1) * rounds + (ring.reduce_scatter ? 0 : rounds);
  }
  return saturated_op_count(static_cast<unsigned __int128>(world) * ring.channels() * per_channel);
}

std::uint64_t tree_op_count(const TreePass& tree) {
  std::uint64_t per_round = 0;
  for (const Tree& t : tree.trees) {
    for (std::size_t m = 0; m < t.parent.size(); ++m) {
      const std::uint64_t children = t.children[m].size();
      const bool has_parent = t.parent[m] >= 0;
      per_round += children == 0 ? 0 : 2 * children - 1;      // receives and local adds
      per_round += has_parent ? 2 : (children == 0 ? 1 : 0);  // send up + receive down, or the root's copy
      per_round += children;                                  // sends down
    }
  }
  return saturated_op_count(static_cast<unsigned __int128>(per_round) * tree.rounds());
}

}  // namespace

std::uint64_t pass_op_count(const Pass& pass) {
  return std::visit(
      PassHandlers{[](const RingPass& ring) { return ring_op_count(ring); },
                   [](const TreePass& tree) { return tree_op_count(tree); },
                   [](const NvlsTreePass& nt) {
                     return sum_over_channels(nt.channels(),
                                              [&](int c) { return nvls_tree_channel_ops(nt, c); });
                   },
                   [](const SharpPass& sp) {
                     return sum_over_channels(sp.channels(), [&](int c) { return sharp_channel_ops(sp, c); });
                   },
                   [](const NvlsPass& nv) {
                     return sum_over_channels(nv.channels(), [&](int c) { return nvls_channel_ops(nv, c); });
                   },
                   [](const ExplicitPass& x) { return x.programs.num_ops(); }},
      pass);
}

std::uint64_t sharp_channel_ops(const SharpPass& pass, int c) {
  // Per member and round (engine/ir/sharp_pass.cpp). Nvls: an in-switch reduce, the network's reduce and an
  // in-switch multicast, every round. Direct: on each round that moves member m's part, m sends its share to
  // each peer and receives theirs, adds them up (g - 1 adds), runs the network's reduce and sends the result
  // to each peer, and each peer receives it: 5(g - 1) + 1, counted on the round's owner.
  // Chain: per round, the tail sends up and receives down, a middle member receives and adds, sends up,
  // receives and sends down, and the head receives and adds, reduces in the network and sends down:
  // 2 + 4(g - 2) + 3 = 4g - 3 (one SHARP reduce where g = 1).
  const int g = pass.gpus_per_node;
  if (pass.intra == SharpIntra::Chain) {
    const unsigned __int128 total = static_cast<unsigned __int128>(4 * static_cast<std::uint64_t>(g) - 3) *
                                    static_cast<std::uint64_t>(pass.chain_rounds()) *
                                    static_cast<std::uint64_t>(pass.nodes);
    return saturated_op_count(total);
  }
  const MemberRounds pipe = member_rounds(pass.count, g, pass.channels(), c, pass.round_elems);
  unsigned __int128 per_node = 0;
  if (pass.intra == SharpIntra::Nvls) {
    per_node = 3 * static_cast<unsigned __int128>(g) * static_cast<std::uint64_t>(pipe.rounds);
  } else {
    for (int m = 0; m < g; ++m) {
      const std::uint64_t moving = (pipe.part(m).count + pipe.round - 1) / pipe.round;
      per_node += static_cast<unsigned __int128>(moving) * (5 * static_cast<std::uint64_t>(g - 1) + 1);
    }
  }
  const unsigned __int128 total = per_node * static_cast<std::uint64_t>(pass.nodes);
  return saturated_op_count(total);
}

bool sharp_channels_alike(const SharpPass& pass, int a, int b) {
  // Chain: the same chain (a member's place in it is its work) and the same part.
  if (pass.intra == SharpIntra::Chain)
    return pass.chains[a] == pass.chains[b] && pass.chain_part(a).count == pass.chain_part(b).count;
  return same_member_rounds(pass.count, pass.gpus_per_node, pass.channels(), pass.round_elems, a, b);
}

std::uint64_t sharp_walked_ops(const SharpPass& pass) {
  SharpPass one = pass;  // nodes alike: node 0 alone is walked
  one.nodes = 1;
  return ops_of_one_channel_per_kind(
      one.channels(), [&](int a, int b) { return sharp_channels_alike(one, a, b); },
      [&](int c) { return sharp_channel_ops(one, c); });
}

std::uint64_t nvls_walked_ops(const NvlsPass& pass) {
  return ops_of_one_channel_per_kind(
      pass.channels(), [&](int a, int b) { return nvls_channels_alike(pass, a, b); },
      [&](int c) { return nvls_channel_ops(pass, c); });
}

std::uint64_t nvls_tree_channel_ops(const NvlsTreePass& pass, int c) {
  // Per member (engine/ir/nvls_tree_pass.cpp): a switch reduce and a switch store every round; on rounds
  // that move data, a receive, a local add and a send per child, and with a parent a send up and a receive
  // down.
  const int g = pass.gpus_per_node;
  const MemberRounds pipe = member_rounds(pass.count, g, pass.channels(), c, pass.round_elems);
  const Tree& t = pass.trees[c];
  unsigned __int128 total = 0;
  for (int m = 0; m < g; ++m) {
    const std::uint64_t moving = (pipe.part(m).count + pipe.round - 1) / pipe.round;
    for (int n = 0; n < pass.nodes(); ++n) {
      const std::uint64_t per_moving_round = 3 * t.children[n].size() + (t.parent[n] >= 0 ? 2 : 0);
      total += 2 * static_cast<std::uint64_t>(pipe.rounds) + moving * per_moving_round;
    }
  }
  return saturated_op_count(total);
}

bool nvls_tree_channels_alike(const NvlsTreePass& pass, int a, int b) {
  return pass.trees[a].parent == pass.trees[b].parent &&
         same_member_rounds(pass.count, pass.gpus_per_node, pass.channels(), pass.round_elems, a, b);
}

std::uint64_t nvls_tree_walked_ops(const NvlsTreePass& pass) {
  return ops_of_one_channel_per_kind(
      pass.channels(), [&](int a, int b) { return nvls_tree_channels_alike(pass, a, b); },
      [&](int c) { return nvls_tree_channel_ops(pass, c); });
}

ElemRange MemberRounds::part(int m) const {
  return partition(partition(ElemRange{0, count}, g, m), channels, channel);
}

Chunk MemberRounds::at(int m, Buffer buffer, int k) const {
  const ElemRange p = part(m);
  const std::uint64_t from = std::min(static_cast<std::uint64_t>(k) * round, p.count);
  return Chunk{buffer, p.offset + from, std::min(round, p.count - from)};
}

MemberRounds member_rounds(std::uint64_t count, int gpus_per_node, int channels, int channel,
                           std::uint64_t round_elems) {
  MemberRounds r;
  r.count = count;
  r.g = std::max(1, gpus_per_node);
  r.channels = std::max(1, channels);
  r.channel = channel;
  std::uint64_t longest = 0;
  for (int m = 0; m < r.g; ++m)
    longest = std::max(longest, r.part(m).count);
  r.round = round_elems == 0 ? std::max<std::uint64_t>(1, longest)
                             : std::max<std::uint64_t>(1, round_elems / static_cast<std::uint64_t>(r.g));
  r.rounds = static_cast<int>((longest + r.round - 1) / r.round);
  return r;
}

}  // namespace cclab
