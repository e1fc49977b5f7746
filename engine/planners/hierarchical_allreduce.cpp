#include "engine/planners/hierarchical_allreduce.hpp"

#include "common/error.hpp"
#include "engine/compose.hpp"
#include "engine/planners/patterns.hpp"
#include "engine/planners/ring_allgather.hpp"
#include "engine/planners/ring_allreduce.hpp"
#include "engine/planners/ring_reduce_scatter.hpp"
#include "engine/planners/tree_allreduce.hpp"

namespace cclab::planners {

Schedule hierarchical_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                                InterAlgorithm inter, int channels, std::uint64_t chunk_elems) {
  const int nodes = static_cast<int>(groups.size());
  CCLAB_ENFORCE(nodes >= 1, "hierarchical allreduce needs at least one node");
  const int per_node = static_cast<int>(groups[0].size());
  for (const auto& g : groups)
    CCLAB_ENFORCE(static_cast<int>(g.size()) == per_node, "nodes differ in GPU count");

  Schedule s = empty_schedule(spec, "hierarchical");
  s.params["inter"] = inter == InterAlgorithm::Ring ? "ring" : "tree";
  Composer composer(s);
  auto block = [&](int local) { return partition(spec.count, per_node, local); };

  // 1. Intra-node reduce-scatter: local rank l's block of the output gets the node's sum.
  CollectiveSpec intra = spec;
  intra.world_size = per_node;
  intra.collective = Collective::ReduceScatter;
  const Schedule rs = ring_reduce_scatter(intra, identity_rings(per_node, channels), chunk_elems);
  for (const auto& g : groups) {
    composer.append(rs, g, [&](int j, Buffer b) {
      return b == Buffer::Input ? Placement{Buffer::Input, 0} : Placement{Buffer::Output, block(j).offset};
    });
  }
  composer.next_phase();

  // 2. Inter-node allreduce of block l among local rank l of every node, in place in the output.
  for (int local = 0; local < per_node; ++local) {
    CollectiveSpec across = spec;
    across.world_size = nodes;
    across.collective = Collective::AllReduce;
    across.count = block(local).count;
    const Schedule ar =
        inter == InterAlgorithm::Ring
            ? ring_allreduce(across, identity_rings(nodes, channels), chunk_elems)
            : tree_allreduce(across, singleton_groups(nodes), std::max(2, channels), chunk_elems);
    std::vector<int> peers;
    for (const auto& g : groups)
      peers.push_back(g[local]);
    composer.append(ar, peers, [&](int, Buffer) { return Placement{Buffer::Output, block(local).offset}; });
  }
  composer.next_phase();

  // 3. Intra-node allgather, in place: block l is already where the allgather wants it.
  CollectiveSpec gather = intra;
  gather.collective = Collective::AllGather;
  const Schedule ag = ring_allgather(gather, identity_rings(per_node, channels), chunk_elems);
  for (const auto& g : groups) {
    composer.append(ag, g, [&](int j, Buffer b) {
      return b == Buffer::Input ? Placement{Buffer::Output, block(j).offset} : Placement{Buffer::Output, 0};
    });
  }
  return s;
}

}  // namespace cclab::planners
