// A tree pass expanded for one member (the pattern is in engine/plan/tree_allreduce.hpp), and the
// children's reduce step that every tree shares.
#include <algorithm>

#include "common/error.hpp"
#include "engine/ir/passes.hpp"
#include "engine/ir/pipeline.hpp"

namespace cclab {

OpId emit_reduce_children(ProgramBuilder& b, const std::vector<int>& children, int channel,
                          const Chunk& input, const Chunk& sum, const ChildSlots& slots) {
  if (children.empty()) return kNoOp;
  // All receives first: ops of a channel start in program order, so a local add placed between two receives
  // would hold the second one back until the first had arrived.
  OpId reduced = b.recv_reduce(children[0], channel, input, sum);
  std::vector<OpId> got;
  auto slot = [&](std::size_t j) {
    return Chunk{Buffer::Scratch, slots.base + (j - 1) * slots.stride + sum.offset, sum.count};
  };
  for (std::size_t j = 1; j < children.size(); ++j)
    got.push_back(b.recv(children[j], channel, slot(j)));
  for (std::size_t j = 1; j < children.size(); ++j)
    reduced = b.local_reduce(slot(j), sum, {reduced, got[j - 1]}, channel);
  return reduced;
}

void expand_tree_pass(const TreePass& pass, int r, Program& program) {
  const int channels = pass.channels();
  CCLAB_ENFORCE(channels >= 1, "tree allreduce needs at least one channel");
  const int rounds = pass.rounds();
  std::vector<OpId> reduced(rounds), sent_up(rounds), have(rounds);
  ProgramBuilder b(program);
  for (const Tree& t : pass.trees)
    program.scratch_count =
        std::max(program.scratch_count, child_slots_size(t.children[r].size(), pass.count));
  for (int c = 0; c < channels; ++c) {
    const Tree& tree = pass.trees[c];
    const int up = 2 * c, down = 2 * c + 1;
    const int parent = tree.parent[r];
    const ElemRange slice = partition(pass.count, channels, c);
    const auto& children = tree.children[r];
    auto chunk = [&](Buffer buffer, int k) { return round_chunk(slice, rounds, k, buffer); };
    // Up: sum the children's partial results into the output, then pass the sum to the parent.
    pipeline(
        rounds,
        [&](int k) {
          reduced[k] = emit_reduce_children(b, children, up, chunk(Buffer::Input, k),
                                            chunk(Buffer::Output, k), ChildSlots{0, pass.count});
        },
        [&](int k) {
          const Chunk sum = children.empty() ? chunk(Buffer::Input, k) : chunk(Buffer::Output, k);
          sent_up[k] = parent >= 0 ? b.send(parent, up, sum, {reduced[k]}) : kNoOp;
        });
    // Down: the root's sum (or the parent's) goes to the output and on to the children.
    pipeline(
        rounds,
        [&](int k) {
          if (parent >= 0)
            have[k] = b.recv(parent, down, chunk(Buffer::Output, k), {sent_up[k]});
          else if (children.empty())
            have[k] = b.copy(chunk(Buffer::Input, k), chunk(Buffer::Output, k), {}, down);
          else
            have[k] = reduced[k];
        },
        [&](int k) {
          for (int child : children)
            b.send(child, down, chunk(Buffer::Output, k), {have[k]});
        });
  }
}

}  // namespace cclab
