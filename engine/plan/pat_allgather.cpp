#include "engine/plan/pat_allgather.hpp"

#include <algorithm>
#include <vector>

namespace cclab::planners {

Schedule pat_allgather(const CollectiveSpec& spec) {
  Schedule s = empty_schedule(spec, "pat");
  const int world = spec.world_size;
  // Blocks first .. first+n-1 (mod P) of the output, as at most two contiguous chunks (the run may wrap).
  auto blocks = [&](int first, int n) {
    std::vector<Chunk> out;
    const int head = std::min(n, world - first);
    const ElemRange a = partition(spec.count, world, first),
                    b = partition(spec.count, world, first + head - 1);
    out.push_back(Chunk{Buffer::Output, a.offset, b.end() - a.offset});
    if (n > head) {
      const ElemRange c = partition(spec.count, world, 0), d = partition(spec.count, world, n - head - 1);
      out.push_back(Chunk{Buffer::Output, c.offset, d.end() - c.offset});
    }
    return out;
  };
  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const ElemRange own = partition(spec.count, world, r);
    // The rank's own block into its place (in place it is already there: a copy onto itself).
    std::vector<OpId> held{b.copy({Buffer::Input, 0, own.count}, {Buffer::Output, own.offset, own.count})};
    for (int distance = 1; distance < world; distance *= 2) {
      const int n = std::min(distance, world - distance);
      const int to = (r - distance + world) % world, from = (r + distance) % world;
      std::vector<OpId> received;
      // Each send waits for every block it carries: the own copy and all earlier receives.
      for (const Chunk& c : blocks(r, n)) {
        Op send;
        send.kind = OpKind::Send;
        send.peer = to;
        send.src = c;
        b.add(send, held);
      }
      for (const Chunk& c : blocks(from, n))
        received.push_back(b.recv(from, 0, c));
      held.insert(held.end(), received.begin(), received.end());
    }
  }
  return s;
}

}  // namespace cclab::planners
