#include "engine/plan/leader_allreduce.hpp"

#include <map>

#include "common/error.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/ring_pattern.hpp"
#include "engine/plan/tree_broadcast.hpp"
#include "engine/plan/tree_reduce.hpp"

namespace cclab::planners {

CompactSchedule leader_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                 int channels, std::uint64_t chunk_elems) {
  CCLAB_ENFORCE(!groups.empty(), "leader allreduce needs at least one node");
  CompactSchedule s(spec, "leader");
  // The node trees are explicit passes, planned once per node size and shared by the nodes of that size.
  auto node_pass = [&](Collective collective, int size, std::map<int, std::shared_ptr<const Pass>>& cache) {
    auto& pass = cache[size];
    if (!pass) {
      CollectiveSpec local = spec;
      local.collective = collective;
      local.world_size = size;
      local.root = 0;
      pass = std::make_shared<const Pass>(ExplicitPass{collective == Collective::Reduce
                                                           ? tree_reduce(local, channels, chunk_elems)
                                                           : tree_broadcast(local, channels, chunk_elems)});
    }
    return pass;
  };
  std::map<int, std::shared_ptr<const Pass>> reduces, broadcasts;
  const BufferPlace output{Buffer::Output};

  // 1. Reduce to each node's leader; the sum lands in the leader's output.
  for (const auto& g : groups)
    s.add_lane(Lane{g, BufferPlace{Buffer::Input}, output,
                    node_pass(Collective::Reduce, static_cast<int>(g.size()), reduces)});
  s.next_phase();

  // 2. Leaders allreduce in place.
  std::vector<int> leaders;
  for (const auto& g : groups)
    leaders.push_back(g[0]);
  const int nodes = static_cast<int>(groups.size());
  s.add_lane(Lane{std::move(leaders), output, output,
                  std::make_shared<const Pass>(
                      ring_allreduce_pass(identity_rings(nodes, channels), spec.count, chunk_elems))});
  s.next_phase();

  // 3. Broadcast from each leader's output, in place.
  for (const auto& g : groups)
    s.add_lane(
        Lane{g, output, output, node_pass(Collective::Broadcast, static_cast<int>(g.size()), broadcasts)});
  return s;
}

Algorithm leader_allreduce_algorithm() {
  return Algorithm{.name = "leader",
                   .collective = Collective::AllReduce,
                   .description = "Horovod-style: reduce to a node leader, leaders allreduce, broadcast",
                   .supports = any_world,
                   .compact =
                       [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
                         return leader_allreduce(s, node_groups(t), channels_or(o, 1), chunk_of(o, s));
                       },
                   .default_channels = [](const CollectiveSpec&, const topo::Topology&) { return 1; }};
}

}  // namespace cclab::planners
