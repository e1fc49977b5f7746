// A SHARP pass expanded for one member (the algorithms are in engine/plan/collnet_allreduce.hpp, direct
// messages inside nodes, engine/plan/collnet_chain_allreduce.hpp, a chain, and
// engine/plan/nvls_sharp_allreduce.hpp, NVLS inside nodes): per channel, round by
// round, the node sum of the member's share, the network's sum of it across nodes in the member's SHARP
// group, and the result back to the node. Peers and groups are members; the lane maps them to ranks.
#include <algorithm>

#include "common/error.hpp"
#include "engine/ir/passes.hpp"
#include "engine/ir/pipeline.hpp"

namespace cclab {
namespace {

// CollNetDirect: each pair of local ranks has a scatter and a gather IR channel of its own per channel (the
// two lanes of one network channel, SharpPass), so that the streams a GPU runs at once are as many IR
// channels, and the α-β model splits its NVSwitch port among the pairs as SimGrid does.
void expand_direct(const SharpPass& pass, int member, Program& program, int only_channel) {
  const int g = pass.gpus_per_node;
  const int n = member / g, m = member % g;
  const int group = m;  // node 0's member m names the SHARP group of local rank m
  const std::uint64_t S = pass.count;
  const std::uint64_t block_elems = (S + g - 1) / static_cast<std::uint64_t>(g);
  const auto peer = [&](int j) { return n * g + j; };
  std::vector<std::vector<OpId>> got;  // per round: the peers' contributions received
  std::vector<OpId> summed, reduced;
  ProgramBuilder b(program);
  // Scratch: a block-sized area per peer (in peer order, skipping m) for its share of our block.
  program.scratch_count = std::max<std::uint64_t>(program.scratch_count, block_elems * (g - 1));
  const std::uint64_t block_offset = partition(ElemRange{0, S}, g, m).offset;
  for (int c = 0; c < pass.channels(); ++c) {
    if (only_channel >= 0 && c != only_channel) continue;
    const int network = pass.network_channel(c);
    const auto scatter = [&](int a, int x) { return pass.scatter_channel(c, a, x); };
    const auto gather = [&](int a, int x) { return pass.gather_channel(c, a, x); };
    // Member m's part of the channel and its rounds, the same on every node: a SHARP group's members and a
    // pair of peers agree on every range.
    const MemberRounds pipe = member_rounds(S, g, pass.channels(), c, pass.round_elems);
    const int rounds = pipe.rounds;
    auto at = [&](int local, Buffer buffer, int k) { return pipe.at(local, buffer, k); };
    auto slot = [&](int j, int k) {
      const Chunk own = at(m, Buffer::Input, k);
      const std::uint64_t area = static_cast<std::uint64_t>(j < m ? j : j - 1);
      return Chunk{Buffer::Scratch, area * block_elems + (own.offset - block_offset), own.count};
    };
    got.assign(rounds, {});
    summed.assign(rounds, kNoOp);
    reduced.assign(rounds, kNoOp);
    pipeline(
        rounds,
        [&](int k) {
          // The peers' shares of our block, and their blocks' share of our input, go out at once; the
          // results of their blocks are received into the output (after our input of that range has left:
          // in place, the output is the input).
          const bool moves = at(m, Buffer::Input, k).count > 0;
          for (int j = 0; j < g; ++j) {
            if (j == m) continue;
            OpId sent = kNoOp;
            if (at(j, Buffer::Input, k).count > 0)
              sent = b.send(peer(j), scatter(m, j), at(j, Buffer::Input, k));
            if (moves) got[k].push_back(b.recv(peer(j), scatter(m, j), slot(j, k)));
            if (at(j, Buffer::Output, k).count > 0)
              b.recv(peer(j), gather(m, j), at(j, Buffer::Output, k), {sent});
          }
        },
        [&](int k) {
          if (at(m, Buffer::Input, k).count == 0) return;
          // On the network lane, in round order: the node sum gathers in the first peer's slot: our input
          // added to it, then the other slots.
          const int first = m == 0 ? 1 : 0;
          Chunk sum = at(m, Buffer::Input, k);
          if (g > 1) {
            summed[k] = b.local_reduce(sum, slot(first, k), {got[k][0]}, network);
            sum = slot(first, k);
            for (std::size_t x = 1; x < got[k].size(); ++x) {
              const int j = static_cast<int>(x) + (static_cast<int>(x) >= m ? 1 : 0);
              summed[k] = b.local_reduce(slot(j, k), sum, {summed[k], got[k][x]}, network);
            }
          }
          // At most kPostAhead SHARP operations of a channel in flight.
          reduced[k] = b.switch_reduce(group, network, sum, at(m, Buffer::Output, k),
                                       {summed[k], k >= kPostAhead ? reduced[k - kPostAhead] : kNoOp});
          for (int j = 0; j < g; ++j)
            if (j != m) b.send(peer(j), gather(m, j), at(m, Buffer::Output, k), {reduced[k]});
        });
  }
}

// NVLS inside nodes: a channel's rounds go through the switch one after the other on IR channel 2c (its
// SMs issue them in turn), the network's on 2c + 1 as the node sums come, at most kPostAhead in flight; round
// k + kPostAhead's reduce is issued before round k's multicast.
void expand_nvls(const SharpPass& pass, int member, Program& program, int only_channel) {
  const int g = pass.gpus_per_node;
  const int n = member / g, m = member % g;
  const int node_group = n * g;  // the node's first member names its NVLS group
  const int sharp_group = m;     // node 0's member m names the SHARP group of local rank m
  std::vector<OpId> node_sum, network_sum, stored;
  ProgramBuilder b(program);
  for (int c = 0; c < pass.channels(); ++c) {
    if (only_channel >= 0 && c != only_channel) continue;
    const int sw = 2 * c, network = pass.network_channel(c);
    const MemberRounds pipe = member_rounds(pass.count, g, pass.channels(), c, pass.round_elems);
    const int rounds = pipe.rounds;
    auto at = [&](Buffer buffer, int k) { return pipe.at(m, buffer, k); };
    node_sum.assign(rounds, kNoOp);
    network_sum.assign(rounds, kNoOp);
    stored.assign(rounds, kNoOp);
    pipeline(
        rounds,
        [&](int k) {
          node_sum[k] = b.switch_reduce(node_group, sw, at(Buffer::Input, k), at(Buffer::Output, k),
                                        {k > 0 ? node_sum[k - 1] : kNoOp});
          network_sum[k] =
              b.switch_reduce(sharp_group, network, at(Buffer::Output, k), at(Buffer::Output, k),
                              {node_sum[k], k >= kPostAhead ? network_sum[k - kPostAhead] : kNoOp});
        },
        [&](int k) {
          stored[k] = b.switch_store(node_group, sw, at(Buffer::Output, k), at(Buffer::Output, k),
                                     {network_sum[k], k > 0 ? stored[k - 1] : kNoOp});
        });
  }
}

// CollNetChain: per channel, round by round, the chain's sum climbs to the head (each member adds its input
// to what the one below sent, as a tree's one-child step does), the head's SHARP group sums the node sums on
// the up lane, at most kPostAhead rounds in flight, and the result runs down the chain on the down lane.
void expand_chain(const SharpPass& pass, int member, Program& program, int only_channel) {
  const int g = pass.gpus_per_node;
  const int n = member / g, m = member % g;
  const int rounds = pass.chain_rounds();
  std::vector<OpId> reduced(rounds), sent_up(rounds), have(rounds);
  ProgramBuilder b(program);
  for (int c = 0; c < pass.channels(); ++c) {
    if (only_channel >= 0 && c != only_channel) continue;
    const std::vector<int>& chain = pass.chains[c];
    const int at = static_cast<int>(std::find(chain.begin(), chain.end(), m) - chain.begin());
    const int above = at > 0 ? n * g + chain[at - 1] : -1;
    const int below = at + 1 < g ? n * g + chain[at + 1] : -1;
    const int up = 2 * c, down = 2 * c + 1;
    const int group = chain[0];  // node 0's head names the heads' SHARP group
    const ElemRange part = pass.chain_part(c);
    auto chunk = [&](Buffer buffer, int k) { return round_chunk(part, rounds, k, buffer); };
    pipeline(
        rounds,
        [&](int k) {
          reduced[k] = below >= 0
                           ? b.recv_reduce(below, up, chunk(Buffer::Input, k), chunk(Buffer::Output, k))
                           : kNoOp;
        },
        [&](int k) {
          const Chunk sum = below >= 0 ? chunk(Buffer::Output, k) : chunk(Buffer::Input, k);
          if (above >= 0) {
            sent_up[k] = b.send(above, up, sum, {reduced[k]});
            return;
          }
          sent_up[k] = b.switch_reduce(group, up, sum, chunk(Buffer::Output, k),
                                       {reduced[k], k >= kPostAhead ? sent_up[k - kPostAhead] : kNoOp});
        });
    pipeline(
        rounds,
        [&](int k) {
          have[k] = above >= 0 ? b.recv(above, down, chunk(Buffer::Output, k), {sent_up[k]}) : sent_up[k];
        },
        [&](int k) {
          if (below >= 0) b.send(below, down, chunk(Buffer::Output, k), {have[k]});
        });
  }
}

}  // namespace

void expand_sharp_pass(const SharpPass& pass, int member, Program& program, int only_channel) {
  CCLAB_ENFORCE(pass.gpus_per_node >= 1 && pass.channels() >= 1, "a SHARP pass needs GPUs and channels");
  if (pass.intra == SharpIntra::Nvls) return expand_nvls(pass, member, program, only_channel);
  if (pass.intra == SharpIntra::Chain) return expand_chain(pass, member, program, only_channel);
  expand_direct(pass, member, program, only_channel);
}

}  // namespace cclab
