// An algorithm's descriptor: what `cclab algorithms`, the registry (engine/plan/registry.hpp), selection and
// every consumer know of a planner. Each planner's file exports its own (ring allreduce's is
// planners::ring_allreduce_algorithm() in engine/plan/ring_allreduce.hpp); the registry is the list of them.
// The rules several descriptors share (which topologies an algorithm applies to, the ring channels, the
// explicit-pass wrapper) are below, so that no rule is written twice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/ir/schedule.hpp"
#include "engine/model/nccl_tuning.hpp"
#include "topology/topology.hpp"

namespace cclab {

class MessageBounds;  // engine/model/lower_bound.hpp

struct PlanOptions {
  std::uint64_t chunk_bytes = 1 << 20;  // pipeline chunk; 0 = one chunk per block
  int channels = 0;                     // 0 = the algorithm's default for the topology
  std::string inter = "ring";           // hierarchical: inter-node algorithm, ring or tree
};

// Whether an algorithm applies: "doesn't apply" is a value with its reason, not an exception.
struct Support {
  bool ok = true;
  std::string reason;  // why not, when !ok
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

using SupportRule = std::function<Support(const CollectiveSpec&, const topo::Topology&, const PlanOptions&)>;
using CompactPlanner =
    std::function<CompactSchedule(const CollectiveSpec&, const topo::Topology&, const PlanOptions&)>;

struct Algorithm {
  std::string name;
  Collective collective;
  std::string description;  // one line
  SupportRule supports;
  // Plans the compact form: O(C·P) for ring and tree passes, whatever the chunking.
  CompactPlanner compact;
  // The channels it plans with when PlanOptions::channels is 0 (the plan may still adjust them: a tree's
  // channel pairs, NVLS's rounds), for `cclab algorithms --topology`.
  std::function<int(const CollectiveSpec&, const topo::Topology&)> default_channels;
  // Optional: a lower bound of the α-β time without planning (engine/model/lower_bound.hpp), for algorithms
  // whose plan is dear to make at scale (explicit passes); the others are bounded from their compact plan.
  std::function<double(const CollectiveSpec&, const MessageBounds&)> unplanned_bound = {};
  // Optional: about how many ops its cost walk expands, known without planning, for algorithms whose cost
  // walks explicit programs (explicit plans, nvls_tree's channels); `auto` leaves out a plan above
  // kAutoMaxExplicitOps (engine/plan/selection.hpp).
  std::function<std::uint64_t(const CollectiveSpec&, const topo::Topology&, const PlanOptions&)>
      unplanned_ops = {};
  // The algorithm NCCL runs under this name (NCCL_ALGO's value), or none for the ones NCCL does not run
  // (hierarchical, leader, halving-doubling, tree broadcast, ...).
  std::optional<NcclAlgo> nccl = std::nullopt;
  // NCCL runs the collective with grouped ncclSend/ncclRecv (alltoall), which no NCCL_ALGO value selects:
  // every NCCL selection ("nccl", any NCCL_ALGO list) includes the algorithm.
  bool nccl_p2p = false;

  // NCCL_ALGO's spelling of `nccl` ("Ring", "NVLSTree", ...), empty where NCCL does not run it.
  std::string_view nccl_name() const { return nccl ? nccl_algo_name(*nccl) : std::string_view{}; }

  // The explicit form: compact(...) expanded on every rank.
  Schedule plan(const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o) const {
    return to_explicit(compact(spec, t, o));
  }
};

namespace planners {

// Support rules. Every one checks the world first: the topology's GPUs are the collective's ranks.
Support any_world(const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o);
// Nodes alike (hierarchical and the per-local-rank allreduces across nodes), inter ring or tree.
Support uniform_nodes(const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o);
// NVLS: every rank in one Hopper-or-later NVLink domain (one node's NVSwitch).
Support one_nvlink_domain(const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o);

// The pieces of PlanOptions a planner reads: --channels or the algorithm's default, the chunk in elements.
inline int channels_or(const PlanOptions& o, int fallback) {
  return o.channels > 0 ? o.channels : fallback;
}
std::uint64_t chunk_of(const PlanOptions& o, const CollectiveSpec& spec);
// One channel per NIC of a node (NCCL opens at least as many channels as NICs), at least one.
int nics_per_node(const topo::Topology& t);
// The rings of --channels, or of the topology's own ring channel count (default_ring_channels,
// engine/plan/ring_search.hpp): every ring-shaped planner takes its rings here.
std::vector<std::vector<int>> rings_for(const topo::Topology& t, const PlanOptions& o);
int ring_channels(const CollectiveSpec& spec, const topo::Topology& t);  // as a default_channels

// PAT: one GPU per node, where NCCL runs it.
Support one_gpu_per_node(const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o);
// Point-to-point collectives, as NCCL runs them (grouped ncclSend/ncclRecv): every peer (the rank itself
// included) at once, each on its share of the channels (planners::peer_channels): at least one per peer, at
// least the ring's.
int p2p_channels(const CollectiveSpec& spec, const topo::Topology& t);
// NVLS inside one NVLink domain: NCCL's channels for it, and a member's round (its NVLS chunk, or the
// pipeline chunk where that is smaller; engine/plan/switch_pattern.hpp).
int nvls_channels(const CollectiveSpec& spec, const topo::Topology& t);
std::uint64_t nvls_round_of(const PlanOptions& o, const CollectiveSpec& spec);
// The rings rotated so that each starts at `first` (first_is_last: ends at it), for chains from or to a root.
std::vector<std::vector<int>> rotated(std::vector<std::vector<int>> rings, int first, bool first_is_last);

// The allreduces that pipeline each local rank's block across nodes as a compact NVLSTree or SHARP pass
// (nvls_tree, collnet, nvls_sharp): uniform nodes, and `unsupported` says what else the topology must have;
// `channels` by default; `ops` sizes their cost walks and `bound` bounds them before planning.
struct AcrossNodes {
  std::string name;
  std::string description;
  std::optional<std::string> (*unsupported)(const topo::Topology&);
  int channels;
  CompactSchedule (*planner)(const CollectiveSpec&, const std::vector<std::vector<int>>& node_groups,
                             int channels, std::uint64_t round_elems);
  std::uint64_t (*ops)(const CollectiveSpec&, int gpus_per_node, int channels, std::uint64_t round_elems);
  double (*bound)(const CollectiveSpec&, const MessageBounds&);
  NcclAlgo nccl;
};
Algorithm across_nodes_algorithm(AcrossNodes a);

// Planners that build explicit programs (one exchange partner per step, or chains) run as one explicit pass,
// with the programs' own count of IR channels per network channel.
CompactSchedule explicit_plan(Schedule s);

}  // namespace planners
}  // namespace cclab
