#include "engine/plan/pat_allgather.hpp"

#include <algorithm>
#include <vector>

#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule pat_allgather(const CollectiveSpec& spec) {
  Schedule s = empty_schedule(spec, "pat");
  const int world = spec.world_size;
  // A copy, then per distance a send and a receive of at most two chunks (a run of blocks may wrap).
  const auto distances = static_cast<std::uint64_t>(bruck_distances(world).size());
  require_block_exchange_fits(spec, static_cast<std::uint64_t>(world) * (1 + 4 * distances),
                              "the PAT allgather",
                              "fewer ranks: the plan is explicit, every rank's program built and checked");
  auto blocks = [&](int first, int n) { return wrapped_blocks(spec.count, world, first, n, Buffer::Output); };
  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const ElemRange own = partition(spec.count, world, r);
    // The rank's own block into its place (in place it is already there: a copy onto itself).
    std::vector<OpId> held{b.copy({Buffer::Input, 0, own.count}, {Buffer::Output, own.offset, own.count})};
    for (const int distance : bruck_distances(world)) {
      const int n = std::min(distance, world - distance);
      const int to = (r - distance + world) % world, from = (r + distance) % world;
      std::vector<OpId> received;
      // Each send waits for every block it carries: the own copy and all earlier receives.
      for (const Chunk& c : blocks(r, n))
        b.send(to, 0, c, held);
      for (const Chunk& c : blocks(from, n))
        received.push_back(b.recv(from, 0, c));
      held.insert(held.end(), received.begin(), received.end());
    }
  }
  return s;
}

Algorithm pat_allgather_algorithm() {
  return Algorithm{.name = "pat",
                   .collective = Collective::AllGather,
                   .description = "NCCL's PAT: Bruck's log-step allgather (one GPU per node)",
                   .supports = one_gpu_per_node,
                   .compact = [](const CollectiveSpec& s, const topo::Topology&,
                                 const PlanOptions&) { return explicit_plan(pat_allgather(s)); },
                   .default_channels = [](const CollectiveSpec&, const topo::Topology&) { return 1; },
                   .nccl = NcclAlgo::Pat};
}

}  // namespace cclab::planners
