#include "engine/plan/pat_reduce_scatter.hpp"

#include <algorithm>
#include <vector>

#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule pat_reduce_scatter(const CollectiveSpec& spec) {
  Schedule s = empty_schedule(spec, "pat");
  const int world = spec.world_size;
  auto blocks = [&](int first, int n) {
    return wrapped_blocks(spec.count, world, first, n, Buffer::Scratch);
  };
  std::vector<int> distances = bruck_distances(world);
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
      for (const Chunk& c : blocks(to, n))
        b.send(to, 0, c, written);
      // Receives add into blocks r .. r+n-1, which earlier steps' receives wrote too: after all of them.
      std::vector<OpId> received;
      for (const Chunk& c : blocks(r, n))
        received.push_back(b.recv_reduce(from, 0, c, c, written));
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

Algorithm pat_reduce_scatter_algorithm() {
  return Algorithm{
      .name = "pat",
      .collective = Collective::ReduceScatter,
      .description = "NCCL's PAT: Bruck's exchange backwards, partials summed on the way (one GPU per node)",
      .supports = one_gpu_per_node,
      .compact = [](const CollectiveSpec& s, const topo::Topology&,
                    const PlanOptions&) { return explicit_plan(pat_reduce_scatter(s)); },
      .default_channels = [](const CollectiveSpec&, const topo::Topology&) { return 1; },
      .nccl = NcclAlgo::Pat};
}

}  // namespace cclab::planners
