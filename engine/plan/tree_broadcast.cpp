#include "engine/plan/tree_broadcast.hpp"

#include "engine/ir/pipeline.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule tree_broadcast(const CollectiveSpec& spec, int channels, std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "tree");
  const Tree tree = rooted_binary_tree(spec.world_size, spec.root);
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  std::vector<OpId> have(rounds);
  for (int r = 0; r < spec.world_size; ++r) {
    ProgramBuilder b(s.ranks[r]);
    for (int c = 0; c < channels; ++c) {
      const ElemRange slice = partition(spec.count, channels, c);
      auto output = [&](int k) {
        const ElemRange e = partition(slice, rounds, k);
        return Chunk{Buffer::Output, e.offset, e.count};
      };
      pipeline(
          rounds,
          [&](int k) {
            const Chunk out = output(k);
            have[k] = tree.parent[r] < 0 ? b.copy(Chunk{Buffer::Input, out.offset, out.count}, out, {}, c)
                                         : b.recv(tree.parent[r], c, out);
          },
          [&](int k) {
            for (int child : tree.children[r])
              b.send(child, c, output(k), {have[k]});
          });
    }
  }
  return s;
}

}  // namespace cclab::planners
