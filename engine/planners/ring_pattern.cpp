#include "engine/planners/ring_pattern.hpp"

#include "common/error.hpp"
#include "engine/planners/patterns.hpp"

namespace cclab::planners {

void emit_ring(Schedule& s, const std::vector<std::vector<int>>& rings, RingPasses passes,
               std::uint64_t count, std::uint64_t chunk_size, const RingRoles& roles) {
  const int world = s.spec.world_size;
  const int channels = static_cast<int>(rings.size());
  CCLAB_ENFORCE(channels >= 1, "a ring needs at least one channel");
  const int rounds = chunk_rounds(partition(partition(count, world, 0), channels, 0).count, chunk_size);

  // pos[c][rank]: position of rank in ring c.
  std::vector<std::vector<int>> pos(channels, std::vector<int>(world, -1));
  for (int c = 0; c < channels; ++c) {
    CCLAB_ENFORCE(static_cast<int>(rings[c].size()) == world, "ring {} has {} ranks for a world of {}", c,
                  rings[c].size(), world);
    for (int i = 0; i < world; ++i)
      pos[c][rings[c][i]] = i;
  }

  std::vector<OpId> last(static_cast<std::size_t>(world) * rounds);  // last op touching (block, chunk)
  for (int r = 0; r < world; ++r) {
    // Reserved up front: at 256+ ranks a program has tens of thousands of ops, and growing the vectors
    // op by op showed up as a fifth of planning time (page faults on every reallocation).
    const std::size_t passes_count = (passes.reduce_scatter ? 1 : 0) + (passes.allgather ? 1 : 0);
    const std::size_t expected_ops =
        static_cast<std::size_t>(channels) * rounds * (2 * passes_count * world + 1);
    s.ranks[r].ops.reserve(expected_ops);
    s.ranks[r].deps.reserve(expected_ops);
    ProgramBuilder b(s.ranks[r]);
    for (int c = 0; c < channels; ++c) {
      const auto& ring = rings[c];
      const int i = pos[c][r];
      const int next = ring[(i + 1) % world], prev = ring[(i - 1 + world) % world];
      auto range = [&](int block, int k) {
        const int owner = ring[(block - 1 + world) % world];
        return partition(partition(partition(count, world, owner), channels, c), rounds, k);
      };
      auto slot = [&](int block, int k) -> OpId& {
        return last[static_cast<std::size_t>(block) * rounds + k];
      };
      std::fill(last.begin(), last.end(), kNoOp);

      if (world == 1) {
        for (int k = 0; k < rounds; ++k) {
          const ElemRange e = range(0, k);
          if (passes.reduce_scatter)
            b.copy(roles.contribution(r, e), roles.reduced(r, e), {}, c);
          else
            b.copy(roles.reduced(r, e), roles.gathered(r, e), {}, c);
        }
        continue;
      }
      if (passes.reduce_scatter) {
        for (int step = 0; step < world - 1; ++step) {
          const int out_block = (i - step + world) % world, in_block = (i - step - 1 + world) % world;
          for (int k = 0; k < rounds; ++k) {
            const ElemRange out = range(out_block, k), in = range(in_block, k);
            const Chunk src = step == 0 ? roles.contribution(r, out) : roles.partial(r, out);
            slot(out_block, k) = b.send(next, c, src, {slot(out_block, k)});
            const Chunk dst = step == world - 2 ? roles.reduced(r, in) : roles.partial(r, in);
            slot(in_block, k) = b.recv_reduce(prev, c, roles.contribution(r, in), dst, {slot(in_block, k)});
          }
        }
      }
      if (passes.allgather) {
        const int own = (i + 1) % world;
        if (!passes.reduce_scatter) {  // the own block must reach the output too
          for (int k = 0; k < rounds; ++k) {
            const ElemRange e = range(own, k);
            slot(own, k) = b.copy(roles.reduced(r, e), roles.gathered(r, e), {slot(own, k)}, c);
          }
        }
        for (int step = 0; step < world - 1; ++step) {
          const int out_block = (i + 1 - step + world) % world, in_block = (i - step + world) % world;
          for (int k = 0; k < rounds; ++k) {
            const ElemRange out = range(out_block, k), in = range(in_block, k);
            const Chunk src = step == 0 ? roles.reduced(r, out) : roles.gathered(r, out);
            slot(out_block, k) = b.send(next, c, src, {slot(out_block, k)});
            slot(in_block, k) = b.recv(prev, c, roles.gathered(r, in), {slot(in_block, k)});
          }
        }
      }
    }
  }
}

}  // namespace cclab::planners
