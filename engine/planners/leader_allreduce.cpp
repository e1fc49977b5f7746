#include "engine/planners/leader_allreduce.hpp"

#include "common/error.hpp"
#include "engine/compose.hpp"
#include "engine/planners/patterns.hpp"
#include "engine/planners/ring_allreduce.hpp"
#include "engine/planners/tree_broadcast.hpp"
#include "engine/planners/tree_reduce.hpp"

namespace cclab::planners {

Schedule leader_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                          int channels, std::uint64_t chunk_elems) {
  CCLAB_ENFORCE(!groups.empty(), "leader allreduce needs at least one node");
  Schedule s = empty_schedule(spec, "leader");
  Composer composer(s);

  // 1. Reduce to each node's leader; the sum lands in the leader's output.
  for (const auto& g : groups) {
    CollectiveSpec local = spec;
    local.collective = Collective::Reduce;
    local.world_size = static_cast<int>(g.size());
    local.root = 0;
    composer.append(tree_reduce(local, channels, chunk_elems), g, [](int, Buffer b) {
      return Placement{b, 0};
    });
  }
  composer.next_phase();

  // 2. Leaders allreduce in place.
  CollectiveSpec across = spec;
  across.world_size = static_cast<int>(groups.size());
  std::vector<int> leaders;
  for (const auto& g : groups)
    leaders.push_back(g[0]);
  composer.append(ring_allreduce(across, identity_rings(across.world_size, channels), chunk_elems), leaders,
                  [](int, Buffer) {
                    return Placement{Buffer::Output, 0};
                  });
  composer.next_phase();

  // 3. Broadcast from each leader's output, in place.
  for (const auto& g : groups) {
    CollectiveSpec local = spec;
    local.collective = Collective::Broadcast;
    local.world_size = static_cast<int>(g.size());
    local.root = 0;
    composer.append(tree_broadcast(local, channels, chunk_elems), g, [](int, Buffer) {
      return Placement{Buffer::Output, 0};
    });
  }
  return s;
}

}  // namespace cclab::planners
