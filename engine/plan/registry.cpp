#include "engine/plan/registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/memory.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/model/lower_bound.hpp"
#include "engine/plan/chain_broadcast.hpp"
#include "engine/plan/chain_reduce.hpp"
#include "engine/plan/collnet_allreduce.hpp"
#include "engine/plan/collnet_chain_allreduce.hpp"
#include "engine/plan/direct_rooted.hpp"
#include "engine/plan/halving_doubling_allreduce.hpp"
#include "engine/plan/hierarchical_allreduce.hpp"
#include "engine/plan/hypercube_allgather.hpp"
#include "engine/plan/leader_allreduce.hpp"
#include "engine/plan/nvls_allgather.hpp"
#include "engine/plan/nvls_allreduce.hpp"
#include "engine/plan/nvls_reduce_scatter.hpp"
#include "engine/plan/nvls_sharp_allreduce.hpp"
#include "engine/plan/nvls_tree_allreduce.hpp"
#include "engine/plan/pairwise_alltoall.hpp"
#include "engine/plan/pat_allgather.hpp"
#include "engine/plan/pat_reduce_scatter.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/ring_allgather.hpp"
#include "engine/plan/ring_allreduce.hpp"
#include "engine/plan/ring_reduce_scatter.hpp"
#include "engine/plan/ring_search.hpp"
#include "engine/plan/shift_sendrecv.hpp"
#include "engine/plan/switch_pattern.hpp"
#include "engine/plan/tree_allreduce.hpp"
#include "engine/plan/tree_broadcast.hpp"
#include "engine/plan/tree_reduce.hpp"

namespace cclab {
namespace {

using topo::Topology;

// Default channels: one per NIC of a node (NCCL opens at least as many channels as NICs), at least one; rings
// take theirs from the topology (engine/plan/ring_search.hpp).
int nics_per_node(const Topology& t) {
  return std::max<int>(1, static_cast<int>(t.nics_of_node(t.node_of_rank(0)).size()));
}
// The rings of the topology's own channel count (planners::default_ring_channels), or of --channels.
std::vector<std::vector<int>> rings_for(const Topology& t, const PlanOptions& o) {
  return planners::search_rings(t, o.channels > 0 ? o.channels : planners::default_ring_channels(t)).rings;
}
int channels_or(const PlanOptions& o, int fallback) {
  return o.channels > 0 ? o.channels : fallback;
}
std::uint64_t chunk_of(const PlanOptions& o, const CollectiveSpec& spec) {
  return planners::chunk_elems(o.chunk_bytes, spec.dtype);
}

// NVLS inside one NVLink domain: NCCL's channels for it and its chunk per member
// (engine/plan/switch_pattern.hpp).
int nvls_channels(const PlanOptions& o, const Topology& t) {
  return channels_or(o, planners::nvls_domain_channels(t));
}
std::uint64_t nvls_round_of(const PlanOptions& o, const CollectiveSpec& spec) {
  return planners::nvls_round_elems(chunk_of(o, spec), spec.dtype, spec.world_size);
}

Support needs_world(const CollectiveSpec& spec, const Topology& t) {
  if (spec.world_size < 1) return Support::no("the world is empty");
  if (static_cast<int>(t.gpus().size()) != spec.world_size) {
    return Support::no(fmt::format("the topology has {} GPUs but the collective spans {} ranks",
                                   t.gpus().size(), spec.world_size));
  }
  return Support::yes();
}
Support any(const CollectiveSpec& spec, const Topology& t, const PlanOptions&) {
  return needs_world(spec, t);
}
Support uniform_nodes(const CollectiveSpec& spec, const Topology& t, const PlanOptions& o) {
  if (auto s = needs_world(spec, t); !s.ok) return s;
  if (!t.uniform()) return Support::no("nodes have different GPU counts");
  if (o.inter != "ring" && o.inter != "tree")
    return Support::no(fmt::format("inter '{}' is not ring or tree", o.inter));
  return Support::yes();
}

// Alltoall: P equal blocks.
Support equal_blocks(const CollectiveSpec& spec, const Topology& t, const PlanOptions&) {
  if (auto s = needs_world(spec, t); !s.ok) return s;
  if (auto problem = alltoall_blocks_problem(spec)) return Support::no(*problem);
  return Support::yes();
}

// Hypercube: a partner per bit of the rank, so a power-of-two world (nccl-tests' hypercube_perf skips
// others).
Support power_of_two_world(const CollectiveSpec& spec, const Topology& t, const PlanOptions&) {
  if (auto s = needs_world(spec, t); !s.ok) return s;
  if ((spec.world_size & (spec.world_size - 1)) != 0)
    return Support::no(
        fmt::format("the hypercube needs a power-of-two world ({} ranks here)", spec.world_size));
  return Support::yes();
}

// PAT: one GPU per node, where NCCL runs it.
Support one_gpu_per_node(const CollectiveSpec& spec, const Topology& t, const PlanOptions& o) {
  if (auto support = any(spec, t, o); !support.ok) return support;
  if (t.max_gpus_per_node() > 1)
    return Support::no("NCCL runs PAT with one GPU per node only (nodes here have several)");
  return Support::yes();
}

// NVLS: every rank in one Hopper-or-later NVLink domain (one node's NVSwitch).
Support one_nvlink_domain(const CollectiveSpec& spec, const Topology& t, const PlanOptions&) {
  if (auto s = needs_world(spec, t); !s.ok) return s;
  if (t.num_nodes() > 1) {
    return Support::no(
        "the ranks span several nodes: NVLS reduces inside one NVLink domain (across nodes: "
        "nvls_tree for allreduce)");
  }
  if (auto why = planners::nvls_unsupported(t)) return Support::no(*why);
  return Support::yes();
}

std::vector<std::vector<int>> rotated(std::vector<std::vector<int>> rings, int first, bool first_is_last) {
  for (auto& ring : rings) {
    auto it = std::find(ring.begin(), ring.end(), first);
    std::rotate(ring.begin(), first_is_last ? std::next(it) : it, ring.end());
  }
  return rings;
}

// Planners that build explicit programs (one exchange partner per step, or chains) run as one explicit pass,
// with the programs' own count of IR channels per network channel.
CompactSchedule explicit_plan(Schedule s) {
  const CollectiveSpec spec = s.spec;
  std::string name = s.algorithm;
  const int lanes = s.lanes_per_channel, kernels = s.kernels;
  CompactSchedule plan = one_lane(spec, std::move(name), ExplicitPass{std::move(s)});
  plan.params.lanes_per_channel = lanes;
  plan.params.kernels = kernels;
  return plan;
}

std::vector<Algorithm> make_registry() {
  std::vector<Algorithm> list;
  auto add = [&](std::string name, Collective c, std::string description, auto supports, auto plan) {
    list.push_back(Algorithm{std::move(name),
                             c,
                             std::move(description),
                             supports,
                             [plan, c](const CollectiveSpec& spec, const Topology& t, const PlanOptions& o) {
                               CCLAB_ENFORCE(spec.collective == c, "planner for {} given {}", to_string(c),
                                             to_string(spec.collective));
                               CompactSchedule s = plan(spec, t, o);
                               if (s.params.chunk_bytes == 0)
                                 s.params.chunk_bytes = o.chunk_bytes;  // the tree sets its own
                               return s;
                             },
                             {},
                             {},
                             {}});
  };
  add("ring", Collective::AllReduce,
      "ring reduce-scatter + allgather, chunked, one ring per channel (rail-rotated)", any,
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return planners::ring_allreduce(s, rings_for(t, o), chunk_of(o, s));
      });
  list.back().nccl = "Ring";
  add("tree", Collective::AllReduce, "NCCL double binary tree over nodes, chains inside nodes, pipelined",
      any, [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        // Two trees per NIC: NCCL's tree graph has a channel per NIC (its chain's first GPU on that NIC),
        // each running both trees, so every NIC takes the parent's side in one channel and the children's
        // in the next. One pair per two NICs left each NIC on one side only, and a node that is interior in
        // both trees (three nodes: NCCL's btree is then a chain) put twice the bytes on half the NICs.
        // On one node, never fewer than fill a GPU's NVLink (a pair of trees per two of those channels);
        // across nodes the NICs set a tree's pace, and more channels would only cut the pipeline's chunks
        // (two A100 nodes with two NICs, 4 MiB to 1 GiB: 55 GB/s on 4 channels, 36 on 8).
        // On an NVLink mesh (DGX-1) each node's chains follow cycles of its NVLinks, a cycle per channel pair
        // in turn: in local-rank order they would cross the CPU between GPUs 3 and 4 and back to 0.
        const auto groups = planners::node_groups(t);
        std::vector<std::vector<std::vector<int>>> cycles;  // per node, its chain orders
        for (const auto& group : groups)
          cycles.push_back(planners::nvlink_chain_orders(t, group));
        std::vector<planners::ChainOrder> orders(cycles[0].size());
        for (std::size_t k = 0; k < orders.size(); ++k) {
          for (const auto& node : cycles)
            orders[k].groups.push_back(node[k % node.size()]);
          orders[k].nics = planners::node_nics(t, orders[k].groups);
        }
        const int fill = groups.size() == 1 ? planners::nvlink_fill_channels(t) : 0;
        const int channels = channels_or(o, std::max(2 * nics_per_node(t), fill + fill % 2));
        std::size_t per_node = 1;
        for (const auto& g : groups)
          per_node = std::max(per_node, g.size());
        const int depth = static_cast<int>(per_node) - 1 +
                          static_cast<int>(std::floor(std::log2(static_cast<double>(groups.size()))));
        const std::uint64_t chunk = planners::tree_chunk_bytes(s.bytes(), channels, depth, o.chunk_bytes);
        CompactSchedule plan =
            planners::tree_allreduce(s, orders, channels, planners::chunk_elems(chunk, s.dtype));
        plan.params.chunk_bytes = chunk;
        return plan;
      });
  list.back().nccl = "Tree";
  add("hierarchical", Collective::AllReduce,
      "intra-node reduce-scatter, inter-node allreduce per local rank (ring or tree), intra-node allgather",
      uniform_nodes, [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        const auto inter =
            o.inter == "tree" ? planners::InterAlgorithm::Tree : planners::InterAlgorithm::Ring;
        // The ring's channel count by default: each phase is NCCL's reduce-scatter, allreduce or allgather
        // (Horovod's hierarchical allreduce calls them), which run on every channel NCCL opens.
        return planners::hierarchical_allreduce(s, planners::node_groups(t), inter,
                                                channels_or(o, planners::default_ring_channels(t)),
                                                chunk_of(o, s));
      });
  add("leader", Collective::AllReduce, "Horovod-style: reduce to a node leader, leaders allreduce, broadcast",
      any, [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return planners::leader_allreduce(s, planners::node_groups(t), channels_or(o, 1), chunk_of(o, s));
      });
  add("nvls", Collective::AllReduce,
      "NVLink SHARP: reduction and multicast inside the NVSwitch (one NVLink domain, Hopper or later)",
      one_nvlink_domain, [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return planners::nvls_allreduce(s, nvls_channels(o, t), nvls_round_of(o, s));
      });
  list.back().nccl = "NVLS";
  // Allreduces that pipeline each local rank's block across nodes (compact NVLSTree and SHARP passes):
  // uniform nodes, `unsupported` says what else the topology must have; planned with `channels` by default;
  // auto bounds them by `bound` and sizes their cost walks by `ops` before planning.
  using OpsEstimate = std::uint64_t (*)(const CollectiveSpec&, int, int, std::uint64_t);
  auto add_across_nodes = [&](std::string name, std::string description,
                              std::optional<std::string> (*unsupported)(const Topology&), int channels,
                              auto planner, OpsEstimate ops, auto bound) {
    add(
        std::move(name), Collective::AllReduce, std::move(description),
        [unsupported](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
          if (auto support = uniform_nodes(s, t, o); !support.ok) return support;
          if (auto why = unsupported(t)) return Support::no(*why);
          return Support::yes();
        },
        [channels, planner](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
          const int c = channels_or(o, channels);
          CompactSchedule plan = planner(s, planners::node_groups(t), c, chunk_of(o, s));
          plan.params.channels = c;
          return plan;
        });
    list.back().unplanned_bound = bound;
    list.back().unplanned_ops = [channels, ops](const CollectiveSpec& s, const Topology& t,
                                                const PlanOptions& o) {
      const int per_node = s.world_size / std::max<int>(1, static_cast<int>(t.num_nodes()));
      return ops(s, per_node, channels_or(o, channels), chunk_of(o, s));
    };
  };
  // A double binary tree per local rank, each over its own NIC; NVLS's channel count.
  add_across_nodes(
      "nvls_tree",
      "NCCL's NVLSTree: NVLS reduce-scatter inside nodes, a tree across nodes per local rank, NVLS allgather",
      [](const Topology& t) -> std::optional<std::string> {
        if (t.num_nodes() < 2) return "one node: nvls runs it (NCCL turns NVLSTree off there too)";
        return planners::nvls_unsupported(t);
      },
      planners::kNvlsDefaultChannels, planners::nvls_tree_allreduce, planners::nvls_tree_ops_estimate,
      nvls_tree_lower_bound_s);
  list.back().nccl = "NVLSTree";
  add_across_nodes(
      "collnet",
      "NCCL's CollNetDirect: direct reduce-scatter inside nodes, SHARP in-network allreduce across, gather",
      planners::collnet_direct_unsupported, planners::kCollNetDefaultChannels, planners::collnet_allreduce,
      planners::collnet_ops_estimate, collnet_lower_bound_s);
  list.back().nccl = "CollNetDirect";
  // CollNetChain: the chains are node 0's stretches of the rings, on 1.5 × the ring's channels (NCCL adds
  // half again where NVLink outpaces the network, src/graph/connect.cc, up to its 32).
  add(
      "collnet_chain", Collective::AllReduce,
      "NCCL's CollNetChain: a chain reduces each node's share up to its NIC's GPU, SHARP across, chain down",
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        if (auto support = uniform_nodes(s, t, o); !support.ok) return support;
        if (auto why = planners::collnet_unsupported(t)) return Support::no(*why);
        return Support::yes();
      },
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        const auto groups = planners::node_groups(t);
        const int channels =
            channels_or(o, planners::collnet_chain_channels(planners::default_ring_channels(t),
                                                            static_cast<int>(groups[0].size())));
        const std::uint64_t chunk = planners::collnet_chain_chunk_bytes(
            s.bytes(), channels, static_cast<int>(groups[0].size()), o.chunk_bytes);
        CompactSchedule plan = planners::collnet_chain_allreduce(
            s, groups, planners::collnet_chains(planners::search_rings(t, channels).rings, groups),
            planners::chunk_elems(chunk, s.dtype));
        plan.params.channels = channels;
        plan.params.chunk_bytes = chunk;
        return plan;
      });
  list.back().nccl = "CollNetChain";
  list.back().unplanned_bound = collnet_lower_bound_s;  // the same bytes through a GPU's links and NIC
  list.back().unplanned_ops = [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
    const int per_node = s.world_size / std::max<int>(1, static_cast<int>(t.num_nodes()));
    const int channels =
        channels_or(o, planners::collnet_chain_channels(planners::default_ring_channels(t), per_node));
    return planners::collnet_chain_ops_estimate(
        s, per_node, channels,
        planners::chunk_elems(
            planners::collnet_chain_chunk_bytes(s.bytes(), channels, per_node, o.chunk_bytes), s.dtype));
  };
  add_across_nodes(
      "nvls_sharp",
      "NCCL's NVLS across nodes with SHARP: NVLS reduce inside nodes, SHARP across, NVLS multicast",
      [](const Topology& t) {
        if (auto why = planners::nvls_unsupported(t)) return why;
        return planners::collnet_unsupported(t);
      },
      planners::kNvlsDefaultChannels, planners::nvls_sharp_allreduce, planners::nvls_sharp_ops_estimate,
      nvls_tree_lower_bound_s);  // NVLS's launch and port bytes bound it as well
  list.back().nccl = "NVLS";     // NCCL runs NVLS across nodes only with CollNet (SHARP) support
  add("halving_doubling", Collective::AllReduce, "Rabenseifner recursive halving + doubling, any world size",
      any, [](const CollectiveSpec& s, const Topology&, const PlanOptions&) {
        return explicit_plan(planners::halving_doubling_allreduce(s));
      });
  list.back().unplanned_bound = halving_doubling_lower_bound_s;
  add("ring", Collective::ReduceScatter, "ring reduce-scatter, chunked, multi-channel", any,
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return planners::ring_reduce_scatter(s, rings_for(t, o), chunk_of(o, s));
      });
  list.back().nccl = "Ring";
  add("pat", Collective::ReduceScatter,
      "NCCL's PAT: Bruck's exchange backwards, partials summed on the way (one GPU per node)",
      one_gpu_per_node, [](const CollectiveSpec& s, const Topology&, const PlanOptions&) {
        return explicit_plan(planners::pat_reduce_scatter(s));
      });
  list.back().nccl = "PAT";
  add("nvls", Collective::ReduceScatter, "NVLink SHARP: each GPU's block reduced inside the NVSwitch",
      one_nvlink_domain, [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return planners::nvls_reduce_scatter(s, nvls_channels(o, t), nvls_round_of(o, s));
      });
  list.back().nccl = "NVLS";
  add("ring", Collective::AllGather, "ring allgather, chunked, multi-channel", any,
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return planners::ring_allgather(s, rings_for(t, o), chunk_of(o, s));
      });
  list.back().nccl = "Ring";
  add("pat", Collective::AllGather, "NCCL's PAT: Bruck's log-step allgather (one GPU per node)",
      one_gpu_per_node, [](const CollectiveSpec& s, const Topology&, const PlanOptions&) {
        return explicit_plan(planners::pat_allgather(s));
      });
  list.back().nccl = "PAT";
  // Not one of NCCL's allgather algorithms: what nccl-tests' hypercube_perf builds from ncclSend/ncclRecv.
  add("hypercube", Collective::AllGather,
      "recursive doubling: log2 P grouped exchanges with rank r XOR 2^k (nccl-tests' hypercube_perf)",
      power_of_two_world, [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return explicit_plan(planners::hypercube_allgather(
            s, channels_or(o, planners::default_ring_channels(t)), chunk_of(o, s)));
      });
  list.back().unplanned_ops = [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
    return planners::hypercube_allgather_ops(s, channels_or(o, planners::default_ring_channels(t)),
                                             chunk_of(o, s));
  };
  add("nvls", Collective::AllGather, "NVLink SHARP: each GPU's block multicast by the NVSwitch",
      one_nvlink_domain, [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return planners::nvls_allgather(s, nvls_channels(o, t), nvls_round_of(o, s));
      });
  list.back().nccl = "NVLS";
  add("chain", Collective::Broadcast, "pipelined chain from the root along the ring", any,
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return explicit_plan(
            planners::chain_broadcast(s, rotated(rings_for(t, o), s.root, false), chunk_of(o, s)));
      });
  list.back().nccl = "Ring";  // NCCL's broadcast and reduce pipeline along its ring: a chain from the root
  add("tree", Collective::Broadcast, "pipelined binary tree rooted at the root", any,
      [](const CollectiveSpec& s, const Topology&, const PlanOptions& o) {
        return explicit_plan(planners::tree_broadcast(s, channels_or(o, 1), chunk_of(o, s)));
      });
  add("chain", Collective::Reduce, "pipelined chain along the ring, ending at the root", any,
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return explicit_plan(
            planners::chain_reduce(s, rotated(rings_for(t, o), s.root, true), chunk_of(o, s)));
      });
  list.back().nccl = "Ring";
  add("tree", Collective::Reduce, "pipelined binary tree ending at the root", any,
      [](const CollectiveSpec& s, const Topology&, const PlanOptions& o) {
        return explicit_plan(planners::tree_reduce(s, channels_or(o, 1), chunk_of(o, s)));
      });
  // Point-to-point collectives, as NCCL runs them (grouped ncclSend/ncclRecv): every peer (the rank itself
  // included) at once, each on its share of the topology's channels (planners::peer_channels), at least one.
  auto p2p_channels = [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
    return channels_or(o, std::max(s.world_size, planners::default_ring_channels(t)));
  };
  add("pairwise", Collective::AllToAll,
      "every pair exchanges its blocks at once, as NCCL's grouped send/receive (channels per peer offset)",
      equal_blocks, [p2p_channels](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return explicit_plan(planners::pairwise_alltoall(s, p2p_channels(s, t, o), chunk_of(o, s)));
      });
  list.back().nccl_p2p = true;
  add("direct", Collective::Gather, "every rank sends its block to the root at once (grouped send/receive)",
      any, [p2p_channels](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return explicit_plan(planners::direct_gather(s, p2p_channels(s, t, o), chunk_of(o, s)));
      });
  list.back().nccl_p2p = true;
  add("direct", Collective::Scatter, "the root sends each rank its block at once (grouped send/receive)", any,
      [p2p_channels](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return explicit_plan(planners::direct_scatter(s, p2p_channels(s, t, o), chunk_of(o, s)));
      });
  list.back().nccl_p2p = true;
  add("shift", Collective::SendRecv,
      "every rank sends its buffer to the next and receives the previous one's", any,
      [](const CollectiveSpec& s, const Topology& t, const PlanOptions& o) {
        return explicit_plan(
            planners::shift_sendrecv(s, channels_or(o, planners::default_ring_channels(t)), chunk_of(o, s)));
      });
  list.back().nccl_p2p = true;
  return list;
}

}  // namespace

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> registry = make_registry();
  return registry;
}

std::vector<const Algorithm*> algorithms_for(Collective collective) {
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : algorithms())
    if (a.collective == collective) out.push_back(&a);
  return out;
}

const Algorithm* find_algorithm(Collective collective, std::string_view name) {
  for (const Algorithm* a : algorithms_for(collective))
    if (a->name == name) return a;
  return nullptr;
}

namespace {

// NCCL_ALGO values of the collective's algorithms, each once, in registry order ("CollNet" is NCCL's older
// spelling of CollNetDirect and is accepted as well).
std::vector<std::string> nccl_names(Collective collective) {
  std::vector<std::string> names;
  for (const Algorithm* a : algorithms_for(collective))
    if (!a->nccl.empty() && std::find(names.begin(), names.end(), a->nccl) == names.end())
      names.push_back(a->nccl);
  return names;
}

[[noreturn]] void unknown_algorithm(Collective collective, std::string_view name) {
  const std::vector<std::string> nccl = nccl_names(collective);
  throw ConfigError(fmt::format("unknown {} algorithm '{}' (valid: {}, auto, nccl{}{}{})",
                                to_string(collective), name, algorithm_names(collective),
                                nccl.empty() ? "" : "; NCCL_ALGO names: ", fmt::join(nccl, ", "),
                                nccl.empty() ? "" : ", a list of them, or ^ and the ones to leave out"));
}

}  // namespace

const Algorithm& require_algorithm(Collective collective, std::string_view name) {
  if (const Algorithm* a = find_algorithm(collective, name)) return *a;
  unknown_algorithm(collective, name);
}

std::optional<std::vector<const Algorithm*>> selection_candidates(Collective collective,
                                                                  std::string_view name) {
  if (find_algorithm(collective, name)) return std::nullopt;
  const std::vector<const Algorithm*> all = algorithms_for(collective);
  if (name == "auto") return all;
  // NCCL_ALGO's own syntax ("^NVLS,NVLSTree" is how runs turn NVLink SHARP off); NCCL also takes CollNet
  // for CollNetDirect.
  NcclNameList list = parse_nccl_name_list(name);
  const bool excluding = list.excluding;
  std::vector<std::string>& wanted = list.names;
  for (std::string& one : wanted)
    if (one == "collnet") one = "collnetdirect";
  const bool everything = wanted.size() == 1 && wanted[0] == "nccl" && !excluding;
  std::vector<const Algorithm*> chosen;
  for (const Algorithm* a : all) {
    if (a->nccl_p2p) {
      chosen.push_back(a);
      continue;
    }
    if (a->nccl.empty()) continue;
    const bool named = std::find(wanted.begin(), wanted.end(), ascii_lowercase(a->nccl)) != wanted.end();
    if (everything || named != excluding) chosen.push_back(a);
  }
  if (everything) return chosen;
  // Every name must be one of NCCL's (here or for another collective or topology): a typo is not a selection.
  for (const std::string& one : wanted) {
    const bool known =
        std::any_of(std::begin(kNcclAlgorithms), std::end(kNcclAlgorithms),
                    [&](const NcclAlgorithmName& n) { return ascii_lowercase(n.name) == one; });
    if (!known) return std::nullopt;
  }
  if (chosen.empty()) return std::nullopt;
  return chosen;
}

bool is_selection(Collective collective, std::string_view name) {
  return selection_candidates(collective, name).has_value();
}

std::string algorithm_names(Collective collective) {
  std::vector<std::string> names;
  for (const Algorithm* a : algorithms_for(collective))
    names.push_back(a->name);
  return fmt::format("{}", fmt::join(names, ", "));
}

CollectiveSpec spec_for(const topo::Topology& topology, Collective collective, std::uint64_t count,
                        DType dtype, ReduceOp op, int root) {
  CollectiveSpec spec;
  spec.collective = collective;
  spec.count = count;
  spec.dtype = dtype;
  spec.op = op;
  spec.root = root;
  spec.world_size = static_cast<int>(topology.gpus().size());
  return spec;
}

}  // namespace cclab
