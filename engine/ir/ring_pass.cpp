// A ring pass expanded for one member (the steps are in engine/plan/ring_pattern.hpp).
#include <algorithm>

#include "common/error.hpp"
#include "engine/ir/passes.hpp"

namespace cclab {

void expand_ring_pass(const RingPass& pass, int r, Program& program) {
  const int world = pass.members();
  const int channels = pass.channels();
  CCLAB_ENFORCE(channels >= 1, "a ring needs at least one channel");
  const int rounds = pass.rounds();
  const std::uint64_t own_offset = partition(pass.count, world, r).offset;
  auto place = [&](const RolePlace& role, ElemRange e) {
    return Chunk{role.buffer, e.offset - (role.own_block_relative ? own_offset : 0), e.count};
  };

  program.scratch_count = std::max(program.scratch_count, pass.scratch_count);
  // Reserved up front: at 256+ ranks a program has tens of thousands of ops, and growing the vectors op by
  // op showed up as a fifth of planning time (page faults on every reallocation).
  const std::size_t passes_count = (pass.reduce_scatter ? 1 : 0) + (pass.allgather ? 1 : 0);
  const std::size_t expected_ops =
      static_cast<std::size_t>(channels) * rounds * (2 * passes_count * world + 1);
  program.ops.reserve(program.ops.size() + expected_ops);
  program.deps.reserve(program.deps.size() + expected_ops);
  ProgramBuilder b(program);
  std::vector<OpId> last(static_cast<std::size_t>(world) * rounds);  // last op touching (block, chunk)
  for (int c = 0; c < channels; ++c) {
    const auto& ring = pass.rings[c];
    const int i = pass.position[c][r];
    const int next = ring[(i + 1) % world], prev = ring[(i - 1 + world) % world];
    auto range = [&](int block, int k) {
      const int owner = ring[(block - 1 + world) % world];
      return partition(partition(partition(pass.count, world, owner), channels, c), rounds, k);
    };
    auto slot = [&](int block, int k) -> OpId& { return last[static_cast<std::size_t>(block) * rounds + k]; };
    std::fill(last.begin(), last.end(), kNoOp);

    if (world == 1) {
      for (int k = 0; k < rounds; ++k) {
        const ElemRange e = range(0, k);
        if (pass.reduce_scatter)
          b.copy(place(pass.contribution, e), place(pass.reduced, e), {}, c);
        else
          b.copy(place(pass.reduced, e), place(pass.gathered, e), {}, c);
      }
      continue;
    }
    if (pass.reduce_scatter) {
      for (int step = 0; step < world - 1; ++step) {
        const int out_block = (i - step + world) % world, in_block = (i - step - 1 + world) % world;
        for (int k = 0; k < rounds; ++k) {
          const ElemRange out = range(out_block, k), in = range(in_block, k);
          const Chunk src = place(step == 0 ? pass.contribution : pass.partial, out);
          slot(out_block, k) = b.send(next, c, src, {slot(out_block, k)});
          const Chunk dst = place(step == world - 2 ? pass.reduced : pass.partial, in);
          slot(in_block, k) = b.recv_reduce(prev, c, place(pass.contribution, in), dst, {slot(in_block, k)});
        }
      }
    }
    if (pass.allgather) {
      const int own = (i + 1) % world;
      if (!pass.reduce_scatter) {  // the own block must reach the output too
        for (int k = 0; k < rounds; ++k) {
          const ElemRange e = range(own, k);
          slot(own, k) = b.copy(place(pass.reduced, e), place(pass.gathered, e), {slot(own, k)}, c);
        }
      }
      for (int step = 0; step < world - 1; ++step) {
        const int out_block = (i + 1 - step + world) % world, in_block = (i - step + world) % world;
        for (int k = 0; k < rounds; ++k) {
          const ElemRange out = range(out_block, k), in = range(in_block, k);
          const Chunk src = place(step == 0 ? pass.reduced : pass.gathered, out);
          slot(out_block, k) = b.send(next, c, src, {slot(out_block, k)});
          slot(in_block, k) = b.recv(prev, c, place(pass.gathered, in), {slot(in_block, k)});
        }
      }
    }
  }
}

}  // namespace cclab
