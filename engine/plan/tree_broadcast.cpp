#include "engine/plan/tree_broadcast.hpp"

#include "engine/ir/pipeline.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule tree_broadcast(const CollectiveSpec& spec, int channels, std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "tree");
  const Tree tree = rooted_binary_tree(spec.world_size, spec.root);
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  for (int r = 0; r < spec.world_size; ++r)
    for (int c = 0; c < channels; ++c)
      broadcast_down(s.ranks[r], tree.parent[r], tree.children[r], c, partition(spec.count, channels, c),
                     rounds);
  return s;
}

void broadcast_down(Program& program, int parent, std::span<const int> children, int channel, ElemRange slice,
                    int rounds) {
  ProgramBuilder b(program);
  std::vector<OpId> have(rounds);
  auto output = [&](int k) {
    const ElemRange e = partition(slice, rounds, k);
    return Chunk{Buffer::Output, e.offset, e.count};
  };
  pipeline(
      rounds,
      [&](int k) {
        const Chunk out = output(k);
        have[k] = parent < 0 ? b.copy(Chunk{Buffer::Input, out.offset, out.count}, out, {}, channel)
                             : b.recv(parent, channel, out);
      },
      [&](int k) {
        for (const int child : children)
          b.send(child, channel, output(k), {have[k]});
      });
}

Algorithm tree_broadcast_algorithm() {
  return Algorithm{.name = "tree",
                   .collective = Collective::Broadcast,
                   .description = "pipelined binary tree rooted at the root",
                   .supports = any_world,
                   .compact =
                       [](const CollectiveSpec& s, const topo::Topology&, const PlanOptions& o) {
                         return explicit_plan(tree_broadcast(s, channels_or(o, 1), chunk_of(o, s)));
                       },
                   .default_channels = [](const CollectiveSpec&, const topo::Topology&) { return 1; }};
}

}  // namespace cclab::planners
