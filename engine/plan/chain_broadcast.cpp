#include "engine/plan/chain_broadcast.hpp"

#include "engine/ir/pipeline.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule chain_broadcast(const CollectiveSpec& spec, const std::vector<std::vector<int>>& chains,
                         std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "chain");
  const int channels = static_cast<int>(chains.size());
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  std::vector<OpId> have(rounds);
  for (int c = 0; c < channels; ++c) {
    const auto& chain = chains[c];
    const ElemRange slice = partition(spec.count, channels, c);
    for (std::size_t i = 0; i < chain.size(); ++i) {
      ProgramBuilder b(s.ranks[chain[i]]);
      const int prev = i > 0 ? chain[i - 1] : -1;
      const int next = i + 1 < chain.size() ? chain[i + 1] : -1;
      auto output = [&](int k) {
        const ElemRange e = partition(slice, rounds, k);
        return Chunk{Buffer::Output, e.offset, e.count};
      };
      pipeline(
          rounds,
          [&](int k) {
            const Chunk out = output(k);
            have[k] = prev < 0 ? b.copy(Chunk{Buffer::Input, out.offset, out.count}, out, {}, c)
                               : b.recv(prev, c, out);
          },
          [&](int k) {
            if (next >= 0) b.send(next, c, output(k), {have[k]});
          });
    }
  }
  return s;
}

}  // namespace cclab::planners
