#include "engine/plan/pat_reduce_scatter.hpp"

#include <algorithm>
#include <vector>

namespace cclab::planners {

Schedule pat_reduce_scatter(const CollectiveSpec& spec) {
  Schedule s = empty_schedule(spec, "pat");
  const int world = spec.world_size;
  // Blocks first .. first+n-1 (mod P) of the partials in scratch, as at most two chunks (the run may wrap).
  auto blocks = [&](int first, int n) {
    std::vector<Chunk> out;
    const int head = std::min(n, world - first);
    const ElemRange a = partition(spec.count, world, first),
                    b = partition(spec.count, world, first + head - 1);
    out.push_back(Chunk{Buffer::Scratch, a.offset, b.end() - a.offset});
    if (n > head) {
      const ElemRange c = partition(spec.count, world, 0), d = partition(spec.count, world, n - head - 1);
      out.push_back(Chunk{Buffer::Scratch, c.offset, d.end() - c.offset});
    }
    return out;
  };
  std::vector<int> distances;
  for (int d = 1; d < world; d *= 2)
    distances.push_back(d);
  std::reverse(distances.begin(), distances.end());
  for (int r = 0; r < world; ++r) {
    Program& p = s.ranks[r];
    p.scratch_count = spec.count;
    ProgramBuilder b(p);
    // Every op waits for the partials it reads: the input's copy and every sum received so far.
    std::vector<OpId> written{b.copy({Buffer::Input, 0, spec.count}, {Buffer::Scratch, 0, spec.count})};
    for (const int d : distances) {
      const int n = std::min(d, world - d);
      const int to = (r + d) % world, from = (r - d + world) % world;
      for (const Chunk& c : blocks(to, n)) {
        Op send;
        send.kind = OpKind::Send;
        send.peer = to;
        send.src = c;
        b.add(send, written);
      }
      // Receives add into blocks r .. r+n-1, which earlier steps' receives wrote too: after all of them.
      std::vector<OpId> received;
      for (const Chunk& c : blocks(r, n)) {
        Op sum;
        sum.kind = OpKind::RecvReduce;
        sum.peer = from;
        sum.src = sum.dst = c;
        received.push_back(b.add(sum, written));
      }
      written.insert(written.end(), received.begin(), received.end());
    }
    const ElemRange own = partition(spec.count, world, r);
    b.add(Op{OpKind::Copy,
             0,
             -1,
             {Buffer::Scratch, own.offset, own.count},
             {Buffer::Output, 0, own.count},
             0,
             0},
          written);
  }
  return s;
}

}  // namespace cclab::planners
