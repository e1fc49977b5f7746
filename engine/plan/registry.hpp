// The algorithm registry: every planner by collective and name, with a description and a supports() predicate
// that says why it does not apply ("doesn't apply" is a value, not an exception), and selection by the α-β
// cost.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/cost.hpp"
#include "engine/ir/compact.hpp"
#include "engine/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace cclab {

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
  // The explicit form: compact(...) expanded on every rank.
  Schedule plan(const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o) const {
    return to_explicit(compact(spec, t, o));
  }
};

const std::vector<Algorithm>& algorithms();
std::vector<const Algorithm*> algorithms_for(Collective collective);
const Algorithm* find_algorithm(Collective collective, std::string_view name);
std::string algorithm_names(Collective collective);  // "ring, tree, ..." for error messages

// The spec a topology implies: world size = its GPU count.
CollectiveSpec spec_for(const topo::Topology& topology, Collective collective, std::uint64_t count,
                        DType dtype, ReduceOp op = ReduceOp::Sum, int root = 0);

// A plan, or why there is none.
struct Planned {
  std::optional<Schedule> schedule;
  std::string reason;
};
// The compact plan, or why there is none.
struct PlannedCompact {
  std::optional<CompactSchedule> schedule;
  std::string reason;
};
// Plans `name` ("auto" selects the cheapest). Unknown names throw ConfigError listing the valid ones.
PlannedCompact plan_compact(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                            const PlanOptions& options = {}, const CostParams& cost = {});
// The same, expanded to the explicit form.
Planned plan_collective(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                        const PlanOptions& options = {}, const CostParams& cost = {});

// One row per algorithm of the collective: its modelled time, or why it does not apply.
struct CostRow {
  std::string algorithm;
  Support support;
  double time_s = 0;
};
std::vector<CostRow> cost_table(const CollectiveSpec& spec, const topo::Topology& topology,
                                const PlanOptions& options = {}, const CostParams& cost = {});
// The cheapest supported row of a cost table, or nullopt when none applies.
std::optional<std::string> cheapest(const std::vector<CostRow>& rows);
// The cheapest supported algorithm's name, or nullopt when none applies.
std::optional<std::string> select_algorithm(const CollectiveSpec& spec, const topo::Topology& topology,
                                            const PlanOptions& options = {}, const CostParams& cost = {});

}  // namespace cclab
