#include "engine/plan/pairwise_alltoall.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "common/memory.hpp"
#include "engine/ir/compact.hpp"
#include "engine/ir/passes.hpp"

namespace cclab::planners {

Schedule pairwise_alltoall(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "pairwise");
  const int world = spec.world_size;
  channels = std::clamp(channels, 1, std::max(1, world - 1));
  s.network_channels = channels;
  s.params["channels"] = std::to_string(channels);
  const int rounds = chunk_rounds(alltoall_block(spec, 0).count, chunk_elems);
  // P² exchanges: an explicit plan that grows with the square of the ranks, refused up front where it would
  // not fit (16,384 ranks: half a billion ops).
  const std::uint64_t ops =
      static_cast<std::uint64_t>(world) *
      (1 + 2 * static_cast<std::uint64_t>(world - 1) * static_cast<std::uint64_t>(rounds));
  require_within_memory_budget(ops * kExplicitBytesPerOp,
                               fmt::format("the pairwise alltoall on {} ranks ({} ops)", world, ops),
                               "fewer ranks, or a larger chunk (--chunk)");
  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const ElemRange own = alltoall_block(spec, r);
    b.copy({Buffer::Input, own.offset, own.count}, {Buffer::Output, own.offset, own.count});
    for (int d = 1; d < world; ++d) {
      const int to = (r + d) % world, from = (r - d + world) % world, channel = (d - 1) % channels;
      // NCCL posts a step's send before its receive; a channel starts its ops in program order, and a send
      // and a receive of different peers wait on nothing of each other.
      for (int k = 0; k < rounds; ++k) {
        b.send(to, channel, round_chunk(alltoall_block(spec, to), rounds, k, Buffer::Input));
        b.recv(from, channel, round_chunk(alltoall_block(spec, from), rounds, k, Buffer::Output));
      }
    }
  }
  return s;
}

}  // namespace cclab::planners
