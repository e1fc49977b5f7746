#include "engine/plan/chain_reduce.hpp"

#include "engine/ir/pipeline.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule chain_reduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& chains,
                      std::uint64_t chunk_size) {
  Schedule s = empty_schedule(spec, "chain");
  const int channels = static_cast<int>(chains.size());
  const int rounds = chunk_rounds(partition(spec.count, channels, 0).count, chunk_size);
  for (auto& p : s.ranks)
    p.scratch_count = spec.count;
  std::vector<OpId> reduced(rounds);
  for (int c = 0; c < channels; ++c) {
    const auto& chain = chains[c];
    const ElemRange slice = partition(spec.count, channels, c);
    for (std::size_t i = 0; i < chain.size(); ++i) {
      ProgramBuilder b(s.ranks[chain[i]]);
      const bool first = i == 0, root = i + 1 == chain.size();
      auto chunk = [&](Buffer buffer, int k) {
        const ElemRange e = partition(slice, rounds, k);
        return Chunk{buffer, e.offset, e.count};
      };
      const Buffer sum = root ? Buffer::Output : Buffer::Scratch;
      pipeline(
          rounds,
          [&](int k) {
            if (first && root)
              b.copy(chunk(Buffer::Input, k), chunk(sum, k), {}, c);
            else if (!first)
              reduced[k] = b.recv_reduce(chain[i - 1], c, chunk(Buffer::Input, k), chunk(sum, k));
          },
          [&](int k) {
            if (first && !root)
              b.send(chain[i + 1], c, chunk(Buffer::Input, k));
            else if (!first && !root)
              b.send(chain[i + 1], c, chunk(sum, k), {reduced[k]});
          });
    }
  }
  return s;
}

Algorithm chain_reduce_algorithm() {
  return Algorithm{
      .name = "chain",
      .collective = Collective::Reduce,
      .description = "pipelined chain along the ring, ending at the root",
      .supports = any_world,
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return explicit_plan(chain_reduce(s, rotated(rings_for(t, o), s.root, true), chunk_of(o, s)));
          },
      .default_channels = ring_channels,
      .nccl = NcclAlgo::Ring};
}

}  // namespace cclab::planners
