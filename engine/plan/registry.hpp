// The algorithm registry: every planner by collective and name, with a description and a supports() predicate
// that says why it does not apply ("doesn't apply" is a value, not an exception). Selection (`auto`) and the
// plan-by-name entry points are in engine/plan/selection.hpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace cclab {

class MessageBounds;  // engine/model/lower_bound.hpp

struct PlanOptions {
  std::uint64_t chunk_bytes = 1 << 20;  // pipeline chunk; 0 = one chunk per block
  int channels = 0;                     // 0 = the algorithm's default for the topology
  std::string inter = "ring";           // hierarchical: inter-node algorithm, ring or tree
};

struct Support {
  bool ok = true;
  std::string reason;  // why not, when !ok
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

struct Algorithm {
  std::string name;
  Collective collective;
  std::string description;
  std::function<Support(const CollectiveSpec&, const topo::Topology&, const PlanOptions&)> supports;
  // Plans the compact form: O(C·P) for ring and tree passes, whatever the chunking.
  std::function<CompactSchedule(const CollectiveSpec&, const topo::Topology&, const PlanOptions&)> compact;
  // Optional: a lower bound of the α-β time without planning (engine/model/lower_bound.hpp), for algorithms
  // whose plan is dear to make at scale (explicit passes); the others are bounded from their compact plan.
  std::function<double(const CollectiveSpec&, const MessageBounds&)> unplanned_bound;
  // Optional: about how many ops its cost walk expands, known without planning, for algorithms whose cost
  // walks explicit programs (explicit plans, nvls_tree's channels); `auto` leaves out a plan above
  // kAutoMaxExplicitOps (engine/plan/selection.hpp).
  std::function<std::uint64_t(const CollectiveSpec&, const topo::Topology&, const PlanOptions&)>
      unplanned_ops;
  // NCCL's name for the algorithm (its NCCL_ALGO value: Ring, Tree, NVLS, NVLSTree, CollNetDirect, PAT),
  // empty for the ones NCCL does not run (hierarchical, leader, halving-doubling, tree broadcast).
  std::string nccl;
  // NCCL runs the collective with grouped ncclSend/ncclRecv (alltoall), which no NCCL_ALGO value selects:
  // every NCCL selection ("nccl", any NCCL_ALGO list) includes the algorithm.
  bool nccl_p2p = false;
  // The explicit form: compact(...) expanded on every rank.
  Schedule plan(const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o) const {
    return to_explicit(compact(spec, t, o));
  }
};

const std::vector<Algorithm>& algorithms();
std::vector<const Algorithm*> algorithms_for(Collective collective);
const Algorithm* find_algorithm(Collective collective, std::string_view name);
// find_algorithm, or ConfigError naming the valid ones.
const Algorithm& require_algorithm(Collective collective, std::string_view name);
std::string algorithm_names(Collective collective);  // "ring, tree, ..." for error messages

// NCCL's algorithm names (NCCL_ALGO's vocabulary) and the first NCCL release whose source defines each
// (NCCL_ALGO_* in its headers, checked at the release tags): Tree 2.4.2, CollNet 2.6.4 (CollNetDirect since
// CollNetChain came, 2.14.3), NVLS 2.17.1, NVLSTree 2.18.1, PAT 2.23.4; Ring always. Versions as NCCL's
// NCCL_VERSION_CODE: major·10000 + minor·100 + patch.
struct NcclAlgorithmName {
  std::string_view name;
  int since_version_code;
};
inline constexpr NcclAlgorithmName kNcclAlgorithms[] = {
    {"Tree", 20402},     {"Ring", 0},   {"CollNetDirect", 20604}, {"CollNetChain", 21403}, {"NVLS", 21701},
    {"NVLSTree", 21801}, {"PAT", 22304}};

// Names that select among algorithms rather than name one: "auto" (the cheapest of every algorithm of the
// collective), "nccl" (NCCL's own algorithms, of which NCCL's tuning model picks one: Selector::choose),
// and NCCL_ALGO values in
// any case (Ring, Tree, NVLS, NVLSTree, CollNetDirect or CollNet, PAT): the algorithms NCCL runs under that
// name here (NVLS is nvls inside one node and nvls_sharp across nodes), a comma-separated list of them, or
// with a leading '^' NCCL's set without them ("^NVLS,NVLSTree"), as NCCL_ALGO takes them. A registry name is
// never a selection.
// Returns the candidates, in registry order; nullopt when `name` is not a selection.
std::optional<std::vector<const Algorithm*>> selection_candidates(Collective collective,
                                                                  std::string_view name);
bool is_selection(Collective collective, std::string_view name);

// The spec a topology implies: world size = its GPU count.
CollectiveSpec spec_for(const topo::Topology& topology, Collective collective, std::uint64_t count,
                        DType dtype, ReduceOp op = ReduceOp::Sum, int root = 0);

}  // namespace cclab
