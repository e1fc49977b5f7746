#include "engine/planners/chain_reduce.hpp"

#include "engine/planners/patterns.hpp"

namespace cclab::planners {

Schedule chain_reduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& chains, std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "chain");
  const int channels = static_cast<int>(chains.size());
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  for (auto& p : s.ranks) p.scratch_count = spec.count;
  for (int c = 0; c < channels; ++c) {
    const auto& chain = chains[c];
    const ElemRange slice = partition(spec.count, channels, c);
    for (std::size_t i = 0; i < chain.size(); ++i) {
      ProgramBuilder b(s.ranks[chain[i]]);
      const bool first = i == 0, root = i + 1 == chain.size();
      for (int k = 0; k < rounds; ++k) {
        const ElemRange e = partition(slice, rounds, k);
        const Chunk input{Buffer::Input, e.offset, e.count};
        const Chunk sum{root ? Buffer::Output : Buffer::Scratch, e.offset, e.count};
        if (first && root) {
          b.copy(input, sum);
        } else if (first) {
          b.send(chain[i + 1], c, input);
        } else {
          const OpId reduced = b.recv_reduce(chain[i - 1], c, input, sum);
          if (!root) b.send(chain[i + 1], c, sum, {reduced});
        }
      }
    }
  }
  return s;
}

}  // namespace cclab::planners
