#include "engine/plan/hierarchical_allreduce.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/ring_pattern.hpp"
#include "engine/plan/tree_allreduce.hpp"

namespace cclab::planners {

CompactSchedule hierarchical_allreduce(const CollectiveSpec& spec,
                                       const std::vector<std::vector<int>>& groups, InterAlgorithm inter,
                                       int channels, std::uint64_t chunk_elems) {
  const int nodes = static_cast<int>(groups.size());
  CCLAB_ENFORCE(nodes >= 1, "hierarchical allreduce needs at least one node");
  const int per_node = static_cast<int>(groups[0].size());
  for (const auto& g : groups)
    CCLAB_ENFORCE(static_cast<int>(g.size()) == per_node, "nodes differ in GPU count");

  CompactSchedule s(spec, "hierarchical");
  s.params.inter = inter == InterAlgorithm::Ring ? "ring" : "tree";
  auto block = [&](int local) { return partition(spec.count, per_node, local); };
  // Local rank l's block of the node's vector, in the output.
  const BufferPlace own_block{Buffer::Output, 0, per_node, spec.count};

  // 1. Intra-node reduce-scatter: local rank l's block of the output gets the node's sum. Every node runs
  //    the same pass on its own ranks.
  const auto intra_rs = std::make_shared<const Pass>(
      ring_reduce_scatter_pass(identity_rings(per_node, channels), spec.count, chunk_elems));
  for (const auto& g : groups)
    s.add_lane(Lane{g, BufferPlace{Buffer::Input}, own_block, intra_rs});
  s.next_phase();

  // 2. Inter-node allreduce of block l among local rank l of every node, in place in the output. A tree's
  //    chunk follows NCCL's tree rule (tree_chunk_bytes) on the block, with --chunk as its ceiling.
  const std::uint64_t elem = dtype_size_bytes(spec.dtype);
  const int tree_channels = std::max(2, channels);
  const int tree_depth = static_cast<int>(std::floor(std::log2(static_cast<double>(nodes))));
  for (int local = 0; local < per_node; ++local) {
    const std::uint64_t count = block(local).count;
    const std::uint64_t tree_chunk =
        tree_chunk_bytes(count * elem, tree_channels, tree_depth, chunk_elems * elem) / elem;
    Pass across =
        inter == InterAlgorithm::Ring
            ? Pass{ring_allreduce_pass(identity_rings(nodes, channels), count, chunk_elems)}
            : Pass{tree_allreduce_pass(singleton_groups(nodes), {}, tree_channels, count,
                                       chunk_elems == 0 ? 0 : std::max<std::uint64_t>(1, tree_chunk))};
    std::vector<int> peers;
    for (const auto& g : groups)
      peers.push_back(g[local]);
    const BufferPlace in_block{Buffer::Output, block(local).offset};
    s.add_lane(Lane{std::move(peers), in_block, in_block, std::make_shared<const Pass>(std::move(across))});
  }
  s.next_phase();

  // 3. Intra-node allgather, in place: block l is already where the allgather wants it.
  const auto intra_ag = std::make_shared<const Pass>(
      ring_allgather_pass(identity_rings(per_node, channels), spec.count, chunk_elems));
  for (const auto& g : groups)
    s.add_lane(Lane{g, own_block, BufferPlace{Buffer::Output}, intra_ag});
  return s;
}

Algorithm hierarchical_allreduce_algorithm() {
  return Algorithm{.name = "hierarchical",
                   .collective = Collective::AllReduce,
                   .description =
                       "intra-node reduce-scatter, inter-node allreduce per local rank (ring or tree), "
                       "intra-node allgather",
                   .supports = uniform_nodes,
                   .compact =
                       [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
                         const auto inter = o.inter == "tree" ? InterAlgorithm::Tree : InterAlgorithm::Ring;
                         // The ring's channel count by default: each phase is NCCL's reduce-scatter,
                         // allreduce or allgather (Horovod's hierarchical allreduce calls them), which run on
                         // every channel NCCL opens.
                         return hierarchical_allreduce(s, node_groups(t), inter,
                                                       channels_or(o, ring_channels(s, t)), chunk_of(o, s));
                       },
                   .default_channels = ring_channels};
}

}  // namespace cclab::planners
