#include "engine/plan/tree_reduce.hpp"

#include "engine/ir/passes.hpp"
#include "engine/ir/pipeline.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule tree_reduce(const CollectiveSpec& spec, int channels, std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "tree");
  const Tree tree = rooted_binary_tree(spec.world_size, spec.root);
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  std::vector<OpId> reduced(rounds);
  for (int r = 0; r < spec.world_size; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const int parent = tree.parent[r];
    const auto& children = tree.children[r];
    // Non-root ranks keep their running sum in scratch [0, count), then one slot per extra child.
    const std::uint64_t sum_size = parent >= 0 && !children.empty() ? spec.count : 0;
    s.ranks[r].scratch_count = sum_size + child_slots_size(children.size(), spec.count);
    for (int c = 0; c < channels; ++c) {
      const ElemRange slice = partition(spec.count, channels, c);
      auto chunk = [&](Buffer buffer, int k) {
        const ElemRange e = partition(slice, rounds, k);
        return Chunk{buffer, e.offset, e.count};
      };
      const Buffer sum = parent < 0 ? Buffer::Output : Buffer::Scratch;
      pipeline(
          rounds,
          [&](int k) {
            reduced[k] = emit_reduce_children(b, children, c, chunk(Buffer::Input, k), chunk(sum, k),
                                              ChildSlots{sum_size, spec.count});
          },
          [&](int k) {
            if (parent >= 0)
              b.send(parent, c, children.empty() ? chunk(Buffer::Input, k) : chunk(sum, k), {reduced[k]});
            else if (children.empty())
              b.copy(chunk(Buffer::Input, k), chunk(sum, k), {}, c);
          });
    }
  }
  return s;
}

Algorithm tree_reduce_algorithm() {
  return Algorithm{.name = "tree",
                   .collective = Collective::Reduce,
                   .description = "pipelined binary tree ending at the root",
                   .supports = any_world,
                   .compact =
                       [](const CollectiveSpec& s, const topo::Topology&, const PlanOptions& o) {
                         return explicit_plan(tree_reduce(s, channels_or(o, 1), chunk_of(o, s)));
                       },
                   .default_channels = [](const CollectiveSpec&, const topo::Topology&) { return 1; }};
}

}  // namespace cclab::planners
