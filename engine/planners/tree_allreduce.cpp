#include "engine/planners/tree_allreduce.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "engine/planners/pipeline.hpp"
#include "engine/planners/tree_pattern.hpp"

namespace cclab::planners {

Tree double_binary_tree(const std::vector<std::vector<int>>& groups, int which_tree, int head) {
  const int nodes = static_cast<int>(groups.size());
  const Tree node_tree = which_tree == 0 ? binary_tree(nodes) : complementary_binary_tree(nodes);
  int world = 0;
  for (const auto& g : groups)
    world += static_cast<int>(g.size());
  std::vector<int> parent(world, -1);
  // The chain starts at local rank `head` and walks up (tree 0) or down (tree 1) through the node.
  auto chain = [&](int node) {
    const auto& g = groups[node];
    const int n = static_cast<int>(g.size());
    std::vector<int> c;
    for (int j = 0; j < n; ++j)
      c.push_back(g[((which_tree == 0 ? head + j : head - j) % n + n) % n]);
    return c;
  };
  for (int n = 0; n < nodes; ++n) {
    const auto c = chain(n);
    for (std::size_t j = 1; j < c.size(); ++j)
      parent[c[j]] = c[j - 1];
    if (node_tree.parent[n] >= 0) parent[c[0]] = chain(node_tree.parent[n])[0];
  }
  return tree_from_parents(std::move(parent));
}

Schedule tree_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups, int channels,
                        std::uint64_t chunk_size) {
  CCLAB_ENFORCE(channels >= 1, "tree allreduce needs at least one channel");
  Schedule s = empty_schedule(spec, "tree");
  // Channel c runs tree c mod 2 with its node chains headed by local rank c, so that channels leave nodes
  // through different GPUs and NICs, as the rings do.
  std::vector<Tree> trees;
  for (int c = 0; c < channels; ++c)
    trees.push_back(double_binary_tree(groups, c % 2, c));
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  std::vector<OpId> reduced(rounds), sent_up(rounds), have(rounds);
  for (int r = 0; r < spec.world_size; ++r) {
    ProgramBuilder b(s.ranks[r]);
    for (const Tree& t : trees)
      s.ranks[r].scratch_count =
          std::max(s.ranks[r].scratch_count, child_slots_size(t.children[r].size(), spec.count));
    for (int c = 0; c < channels; ++c) {
      const Tree& tree = trees[c];
      const int up = 2 * c, down = 2 * c + 1;
      const int parent = tree.parent[r];
      const ElemRange slice = partition(spec.count, channels, c);
      const auto& children = tree.children[r];
      auto chunk = [&](Buffer buffer, int k) {
        const ElemRange e = partition(slice, rounds, k);
        return Chunk{buffer, e.offset, e.count};
      };
      // Up: sum the children's partial results into the output, then pass the sum to the parent.
      pipeline(
          rounds,
          [&](int k) {
            reduced[k] = emit_reduce_children(b, children, up, chunk(Buffer::Input, k),
                                              chunk(Buffer::Output, k), ChildSlots{0, spec.count});
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
  s.params.emplace("lanes", "2");  // IR channels 2c (up) and 2c+1 (down) are one channel's two lanes
  return s;
}

}  // namespace cclab::planners
