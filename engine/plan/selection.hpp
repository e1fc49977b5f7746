// The one `auto`: every algorithm of the collective that applies is planned once, checked, and costed by the
// α-β model on the compact form; the cheapest wins. A Selector keeps what it planned and costed, so that a
// sweep meeting the same buckets again and again (the step model under `predict`) plans each schedule once,
// and the winner is never planned a second time. `cclab plan --algo auto`, the cost table, `predict` and
// `regress` all select through it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "engine/model/cost.hpp"
#include "engine/plan/registry.hpp"

namespace cclab {

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

// One algorithm for one spec on one topology: its plan and modelled time, or why it does not apply (or could
// not be costed within the memory budget). With protocol Auto, every NCCL protocol that applies is costed
// and the cheapest is the candidate's; `by_protocol` keeps them all (the algorithm x protocol table).
struct Candidate {
  std::string algorithm;
  Support support;
  std::shared_ptr<const CompactSchedule> schedule;  // set when support.ok
  double time_s = 0;                                // α-β time, when support.ok
  Protocol protocol = Protocol::Raw;                // the protocol of time_s
  std::vector<std::pair<Protocol, double>> by_protocol;
  bool pruned = false;  // auto_table: not costed, its lower bound showed it cannot win
  // An NCCL selection's pick: what NCCL's tuning model (engine/model/nccl_tuning.hpp) estimated for every
  // algorithm × protocol it priced, in NCCL's order (the pick is the least), or why cclab could not consult
  // it and took the cheapest by its own model instead.
  struct NcclEstimate {
    std::string algorithm;  // cclab's name
    Protocol protocol = Protocol::Simple;
    double time_us = 0;
  };
  std::vector<NcclEstimate> nccl_estimates;
  std::string nccl_note;
};

// The most ops `auto` expands and walks for one candidate whose cost needs explicit programs (an explicit
// plan whole; nvls_tree one channel of each of its trees at a time): about five seconds of walking on a
// 2-core machine, and 600 MB. Above it the candidate is listed as not costed, with its size, and `--algo
// NAME` still costs it. (nvls_tree over 1,024 H100 GPUs at 1 GiB was 7.3 M ops, all expanded at once: 36 s
// and 1.9 GB for `plan --algo auto` before this limit; walked by channel it is 0.9 M.)
inline constexpr std::uint64_t kAutoMaxExplicitOps = std::uint64_t{1} << 22;

class Selector {
 public:
  // Called once on every schedule the selector plans, before it is costed: the caller's verification (it
  // throws to reject).
  using OnPlanned = std::function<void(const CompactSchedule&)>;

  explicit Selector(CostParams cost = {}, OnPlanned on_planned = {});

  // The candidate `name`, or with a selection the one it picks among its candidates that apply (support.ok
  // false, with the reason, when none does): `auto` the cheapest by cclab's model; NCCL's selections ("nccl",
  // an NCCL_ALGO value: registry.hpp) the algorithm and protocol NCCL's own tuning model picks, costed by
  // cclab's — NCCL runs what its estimate favours, not what is fastest — or, where cclab cannot reproduce
  // NCCL's graphs (nccl_note says why) or NCCL picks per transfer (alltoall, gather, scatter, sendrecv), the
  // cheapest. Unknown names throw ConfigError listing the valid ones. The topology must outlive the selector:
  // it is part of the cache key by address.
  const Candidate& choose(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                          const PlanOptions& options = {});
  // Every algorithm of the collective, in registry order, each costed.
  std::vector<Candidate> table(const CollectiveSpec& spec, const topo::Topology& topology,
                               const PlanOptions& options = {});
  // What choose(..., "auto") costs: the candidates in the order of their lower bounds
  // (engine/model/lower_bound.hpp), skipping those whose bound shows they cannot win; rows in registry
  // order, a skipped one with support.ok false, `pruned` set and its bound in the reason.
  // `selection` narrows the rows to its candidates ("nccl": NCCL's algorithms only).
  std::vector<Candidate> auto_table(const CollectiveSpec& spec, const topo::Topology& topology,
                                    const PlanOptions& options = {}, std::string_view selection = "auto");

 private:
  using Key = std::tuple<const topo::Topology*, Collective, std::uint64_t, DType, ReduceOp, int, int,
                         std::uint64_t, int, std::string, std::string>;
  static Key key_of(const CollectiveSpec& spec, const topo::Topology& topology, const PlanOptions& options,
                    std::string_view name);
  const Candidate& candidate(const Algorithm& algorithm, const CollectiveSpec& spec,
                             const topo::Topology& topology, const PlanOptions& options,
                             std::shared_ptr<const CompactSchedule> planned = nullptr);

  // NCCL's pick for a selection, cached under the selection's name; nullptr where its tuning model cannot be
  // consulted (the note says why).
  const Candidate* nccl_choice(const CollectiveSpec& spec, const topo::Topology& topology,
                               std::string_view name, const PlanOptions& options, std::string& note);

  CostParams cost_;
  OnPlanned on_planned_;
  std::map<Key, Candidate> cache_;  // by algorithm name; "auto" only when nothing applies
};

// One-shot entry points (a Selector of their own; use one Selector across calls to share its plans).
// Plans `name` (a selection picks the cheapest of its candidates). Unknown names throw ConfigError listing
// the valid ones.
PlannedCompact plan_compact(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                            const PlanOptions& options = {}, const CostParams& cost = {});
// The same, expanded to the explicit form.
Planned plan_collective(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                        const PlanOptions& options = {}, const CostParams& cost = {});
// One row per algorithm of the collective: its modelled time, or why it does not apply.
std::vector<Candidate> cost_table(const CollectiveSpec& spec, const topo::Topology& topology,
                                  const PlanOptions& options = {}, const CostParams& cost = {});
// The cheapest supported algorithm's name, or nullopt when none applies.
std::optional<std::string> select_algorithm(const CollectiveSpec& spec, const topo::Topology& topology,
                                            const PlanOptions& options = {}, const CostParams& cost = {});

}  // namespace cclab
