#include "engine/planners/tree_reduce.hpp"

#include "engine/planners/patterns.hpp"

namespace cclab::planners {

Schedule tree_reduce(const CollectiveSpec& spec, int channels, std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "tree");
  const Tree tree = rooted_binary_tree(spec.world_size, spec.root);
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  for (int r = 0; r < spec.world_size; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const int parent = tree.parent[r];
    if (parent >= 0 && !tree.children[r].empty()) s.ranks[r].scratch_count = spec.count;
    for (int c = 0; c < channels; ++c) {
      const ElemRange slice = partition(spec.count, channels, c);
      for (int k = 0; k < rounds; ++k) {
        const ElemRange e = partition(slice, rounds, k);
        const Chunk input{Buffer::Input, e.offset, e.count};
        const Chunk sum{parent < 0 ? Buffer::Output : Buffer::Scratch, e.offset, e.count};
        OpId reduced = kNoOp;
        Chunk acc = input;
        for (int child : tree.children[r]) {
          reduced = b.recv_reduce(child, c, acc, sum, {reduced});
          acc = sum;
        }
        if (parent >= 0) b.send(parent, c, acc, {reduced});
        else if (tree.children[r].empty()) b.copy(input, sum);
      }
    }
  }
  return s;
}

}  // namespace cclab::planners
