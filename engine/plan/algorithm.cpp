#include "engine/plan/algorithm.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/plan/patterns.hpp"
#include "engine/plan/ring_search.hpp"
#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {
namespace {

using topo::Topology;

Support needs_world(const CollectiveSpec& spec, const Topology& t) {
  if (spec.world_size < 1) return Support::no("the world is empty");
  if (static_cast<int>(t.gpus().size()) != spec.world_size) {
    return Support::no(fmt::format("the topology has {} GPUs but the collective spans {} ranks",
                                   t.gpus().size(), spec.world_size));
  }
  return Support::yes();
}

}  // namespace

Support any_world(const CollectiveSpec& spec, const Topology& t, const PlanOptions&) {
  return needs_world(spec, t);
}

Support uniform_nodes(const CollectiveSpec& spec, const Topology& t, const PlanOptions& o) {
  if (auto s = needs_world(spec, t); !s.ok) return s;
  if (!t.uniform()) return Support::no("nodes have different GPU counts");
  if (o.inter != "ring" && o.inter != "tree")
    return Support::no(fmt::format("inter '{}' is not ring or tree", o.inter));
  return Support::yes();
}

Support one_nvlink_domain(const CollectiveSpec& spec, const Topology& t, const PlanOptions&) {
  if (auto s = needs_world(spec, t); !s.ok) return s;
  if (t.num_nodes() > 1) {
    return Support::no(
        "the ranks span several nodes: NVLS reduces inside one NVLink domain (across nodes: "
        "nvls_tree for allreduce)");
  }
  if (auto why = nvls_unsupported(t)) return Support::no(*why);
  return Support::yes();
}

Support one_gpu_per_node(const CollectiveSpec& spec, const Topology& t, const PlanOptions& o) {
  if (auto support = any_world(spec, t, o); !support.ok) return support;
  if (t.max_gpus_per_node() > 1)
    return Support::no("NCCL runs PAT with one GPU per node only (nodes here have several)");
  return Support::yes();
}

std::uint64_t chunk_of(const PlanOptions& o, const CollectiveSpec& spec) {
  return chunk_elems(o.chunk_bytes, spec.dtype);
}

int nics_per_node(const Topology& t) {
  return std::max<int>(1, static_cast<int>(t.nics_of_node(t.node_of_rank(0)).size()));
}

std::vector<std::vector<int>> rings_for(const Topology& t, const PlanOptions& o) {
  return search_rings(t, o.channels > 0 ? o.channels : default_ring_channels(t)).rings;
}

int ring_channels(const CollectiveSpec&, const Topology& t) {
  return default_ring_channels(t);
}

int p2p_channels(const CollectiveSpec& spec, const Topology& t) {
  return std::max(spec.world_size, default_ring_channels(t));
}

int nvls_channels(const CollectiveSpec&, const Topology& t) {
  return nvls_domain_channels(t);
}

std::uint64_t nvls_round_of(const PlanOptions& o, const CollectiveSpec& spec) {
  return nvls_round_elems(chunk_of(o, spec), spec.dtype, spec.world_size);
}

std::vector<std::vector<int>> rotated(std::vector<std::vector<int>> rings, int first, bool first_is_last) {
  for (auto& ring : rings) {
    auto it = std::find(ring.begin(), ring.end(), first);
    std::rotate(ring.begin(), first_is_last ? std::next(it) : it, ring.end());
  }
  return rings;
}

Algorithm across_nodes_algorithm(AcrossNodes a) {
  const int channels = a.channels;
  return Algorithm{
      .name = std::move(a.name),
      .collective = Collective::AllReduce,
      .description = std::move(a.description),
      .supports =
          [unsupported = a.unsupported](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
            if (auto support = uniform_nodes(s, t, o); !support.ok) return support;
            if (auto why = unsupported(t)) return Support::no(*why);
            return Support::yes();
          },
      .compact =
          [channels, planner = a.planner](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
            const int c = channels_or(o, channels);
            CompactSchedule plan = planner(s, node_groups(t), c, chunk_of(o, s));
            plan.params.channels = c;
            return plan;
          },
      .default_channels = [channels](const CollectiveSpec&, const Topology&) { return channels; },
      .unplanned_bound = a.bound,
      .unplanned_ops =
          [channels, ops = a.ops](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
            const int per_node = s.world_size / std::max<int>(1, static_cast<int>(t.num_nodes()));
            return ops(s, per_node, channels_or(o, channels), chunk_of(o, s));
          },
      .nccl = a.nccl};
}

CompactSchedule explicit_plan(Schedule s) {
  const CollectiveSpec spec = s.spec;
  std::string name = s.algorithm;
  const int lanes = s.lanes_per_channel, kernels = s.kernels;
  CompactSchedule plan = one_lane(spec, std::move(name), ExplicitPass{std::move(s)});
  plan.params.lanes_per_channel = lanes;
  plan.params.kernels = kernels;
  return plan;
}

}  // namespace cclab::planners
