// An NVLSTree pass expanded for one member (the algorithm is in engine/plan/nvls_tree_allreduce.hpp): per
// channel, round by round, an in-switch reduce of the round across the node, the node tree per local rank up
// and down, and an in-switch multicast of the sum. Peers are members; the lane maps them to ranks.
#include <algorithm>

#include "common/error.hpp"
#include "engine/ir/passes.hpp"
#include "engine/ir/pipeline.hpp"

namespace cclab {

void expand_nvls_tree_pass(const NvlsTreePass& pass, int member, Program& program, int only_channel) {
  const int g = pass.gpus_per_node;
  CCLAB_ENFORCE(g >= 1 && pass.channels() >= 1, "nvls_tree needs GPUs and channels");
  const int n = member / g, m = member % g;
  const int group = n * g;  // the node's first member names its switch group
  const std::uint64_t S = pass.count;
  std::vector<OpId> node_sum, reduced, sent_up, have, stored;
  std::vector<std::vector<OpId>> got;  // per round: the children's receives
  ProgramBuilder b(program);
  for (int c = 0; c < pass.channels(); ++c) {
    if (only_channel >= 0 && c != only_channel) continue;
    const Tree& tree = pass.trees[c];
    const int sw_reduce = 4 * c, up = 4 * c + 1, down = 4 * c + 2, sw_store = 4 * c + 3;
    const MemberRounds pipe = member_rounds(S, g, pass.channels(), c, pass.round_elems);
    const int rounds = pipe.rounds;
    std::vector<int> children;
    for (const int child : tree.children[n])
      children.push_back(child * g + m);
    const int parent = tree.parent[n] >= 0 ? tree.parent[n] * g + m : -1;
    // Scratch: [0, S) receives the vector's sum from the parent (so that the receive need not wait for the
    // send up of the same range), then a vector per child for its sums.
    program.scratch_count = std::max<std::uint64_t>(program.scratch_count, S * (1 + children.size()));
    auto at = [&](Buffer buffer, int k) { return pipe.at(m, buffer, k); };
    // Child j's slot: scratch past the receive area, one vector per child.
    auto slot = [&](std::size_t j, int k) {
      const Chunk c = at(Buffer::Scratch, k);
      return Chunk{Buffer::Scratch, (1 + j) * S + c.offset, c.count};
    };
    got.assign(rounds, {});
    node_sum.assign(rounds, kNoOp);
    stored.assign(rounds, kNoOp);
    reduced.assign(rounds, kNoOp);
    sent_up.assign(rounds, kNoOp);
    have.assign(rounds, kNoOp);
    // Reduce and multicast are streams of their own, as in NCCL's kernel (separate warps): the reduce of
    // round k waits for the tree to have taken round k - kPostAhead - 1 up (its buffer slots), not for that
    // round's way back down, and the two share the port like one channel (ConnectionCosts). On one IR
    // channel, the reduce of round k + kPostAhead was issued after round k's multicast, which waits for the
    // round to climb and descend the tree: a deep tree's round trip, not the links, set the pace. Receives
    // are posted kPostAhead rounds ahead on their channels.
    pipeline(
        rounds,
        [&](int k) {
          const bool moves = at(Buffer::Output, k).count > 0;
          const int taken_up = k - kPostAhead - 1;  // the round whose buffer slot this reduce reuses
          const OpId freed = taken_up < 0                 ? kNoOp
                             : sent_up[taken_up] != kNoOp ? sent_up[taken_up]
                                                          : reduced[taken_up];
          // A channel's rounds go through the switch one after the other (its SMs issue them in turn).
          node_sum[k] = b.switch_reduce(group, sw_reduce, at(Buffer::Input, k), at(Buffer::Output, k),
                                        {k > 0 ? node_sum[k - 1] : kNoOp, freed});
          reduced[k] = node_sum[k];
          got[k].clear();
          if (moves) {
            // The children's sums land in their slots: a receive that waited for the switch reduce (a
            // recv_reduce into the output) would tie the tree's progress to the switch channel's.
            for (std::size_t j = 0; j < children.size(); ++j)
              got[k].push_back(b.recv(children[j], up, slot(j, k)));
            if (parent >= 0) have[k] = b.recv(parent, down, at(Buffer::Scratch, k));
          }
        },
        [&](int k) {
          const bool moves = at(Buffer::Output, k).count > 0;
          // The adds come kPostAhead rounds later in the channel's order: an add waits for its data, and
          // placed at once it would hold back the next rounds' receives, so that each tree level would lag
          // that many rounds more than the one below it.
          for (std::size_t j = 0; j < got[k].size(); ++j)
            reduced[k] = b.local_reduce(slot(j, k), at(Buffer::Output, k), {reduced[k], got[k][j]}, up);
          if (parent >= 0 && moves) sent_up[k] = b.send(parent, up, at(Buffer::Output, k), {reduced[k]});
          // The root's sum is in its output; everyone else's arrived in scratch.
          const bool from_parent = have[k] != kNoOp;
          if (!from_parent) have[k] = reduced[k];
          const Chunk sum = from_parent ? at(Buffer::Scratch, k) : at(Buffer::Output, k);
          std::vector<OpId> deps{have[k], sent_up[k], k > 0 ? stored[k - 1] : kNoOp};
          if (moves)
            for (const int child : children)
              deps.push_back(b.send(child, down, sum, {have[k]}));
          stored[k] = b.switch_store(group, sw_store, sum, at(Buffer::Output, k), deps);
        });
  }
}

}  // namespace cclab
