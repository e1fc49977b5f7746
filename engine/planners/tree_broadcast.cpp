#include "engine/planners/tree_broadcast.hpp"

#include "engine/planners/patterns.hpp"

namespace cclab::planners {

Schedule tree_broadcast(const CollectiveSpec& spec, int channels, std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "tree");
  const Tree tree = rooted_binary_tree(spec.world_size, spec.root);
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  for (int r = 0; r < spec.world_size; ++r) {
    ProgramBuilder b(s.ranks[r]);
    for (int c = 0; c < channels; ++c) {
      const ElemRange slice = partition(spec.count, channels, c);
      for (int k = 0; k < rounds; ++k) {
        const ElemRange e = partition(slice, rounds, k);
        const Chunk output{Buffer::Output, e.offset, e.count};
        const OpId have = tree.parent[r] < 0 ? b.copy(Chunk{Buffer::Input, e.offset, e.count}, output)
                                             : b.recv(tree.parent[r], c, output);
        for (int child : tree.children[r]) b.send(child, c, output, {have});
      }
    }
  }
  return s;
}

}  // namespace cclab::planners
