#include "engine/plan/selection.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/model/compact_cost.hpp"

namespace cclab {

Selector::Selector(CostParams cost, OnPlanned on_planned) : cost_(cost), on_planned_(std::move(on_planned)) {}

Selector::Key Selector::key_of(const CollectiveSpec& spec, const topo::Topology& topology,
                               const PlanOptions& options, std::string_view name) {
  return {&topology,       spec.collective,     spec.count,       spec.dtype,    spec.op,          spec.root,
          spec.world_size, options.chunk_bytes, options.channels, options.inter, std::string(name)};
}

const Candidate& Selector::candidate(const Algorithm& algorithm, const CollectiveSpec& spec,
                                     const topo::Topology& topology, const PlanOptions& options) {
  const Key key = key_of(spec, topology, options, algorithm.name);
  if (auto hit = cache_.find(key); hit != cache_.end()) return hit->second;
  Candidate c;
  c.algorithm = algorithm.name;
  c.support = algorithm.supports(spec, topology, options);
  if (c.support.ok) {
    auto schedule = std::make_shared<const CompactSchedule>(algorithm.compact(spec, topology, options));
    if (on_planned_) on_planned_(*schedule);
    // A candidate whose model would not fit the memory budget (a tree lane walked as ops, the send table of a
    // huge ring) is reported as not costed instead of failing the whole selection.
    try {
      std::vector<ProtocolRun> runs = estimate_compact_cost_by_protocol(*schedule, topology, cost_);
      for (const ProtocolRun& r : runs)
        c.by_protocol.emplace_back(r.protocol, r.run.total_s);
      const ProtocolRun best = cheapest(std::move(runs));
      c.time_s = best.run.total_s;
      c.protocol = best.protocol;
      c.schedule = std::move(schedule);
    } catch (const ConfigError& e) {
      c.support = Support::no(fmt::format("not costed: {}", e.what()));
    }
  }
  return cache_.emplace(key, std::move(c)).first->second;
}

std::vector<Candidate> Selector::table(const CollectiveSpec& spec, const topo::Topology& topology,
                                       const PlanOptions& options) {
  std::vector<Candidate> rows;
  for (const Algorithm* a : algorithms_for(spec.collective))
    rows.push_back(candidate(*a, spec, topology, options));
  return rows;
}

const Candidate& Selector::choose(const CollectiveSpec& spec, const topo::Topology& topology,
                                  std::string_view name, const PlanOptions& options) {
  if (name != "auto") return candidate(require_algorithm(spec.collective, name), spec, topology, options);
  const Candidate* best = nullptr;
  for (const Algorithm* a : algorithms_for(spec.collective)) {
    const Candidate& c = candidate(*a, spec, topology, options);
    if (c.support.ok && (!best || c.time_s < best->time_s)) best = &c;
  }
  if (best) return *best;
  const Key key = key_of(spec, topology, options, "auto");
  Candidate none;
  none.algorithm = "auto";
  none.support = Support::no(fmt::format("no {} algorithm applies", to_string(spec.collective)));
  return cache_.insert_or_assign(key, std::move(none)).first->second;  // no algorithm is named "auto"
}

PlannedCompact plan_compact(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                            const PlanOptions& options, const CostParams& cost) {
  if (name == "auto") {
    Selector selector(cost);
    const Candidate& c = selector.choose(spec, topology, name, options);
    if (!c.support.ok) return PlannedCompact{std::nullopt, c.support.reason};
    return PlannedCompact{*c.schedule, {}};
  }
  // A named algorithm is planned, not costed.
  const Algorithm& algorithm = require_algorithm(spec.collective, name);
  if (Support s = algorithm.supports(spec, topology, options); !s.ok) {
    return PlannedCompact{std::nullopt, fmt::format("{} does not apply: {}", name, s.reason)};
  }
  return PlannedCompact{algorithm.compact(spec, topology, options), {}};
}

Planned plan_collective(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                        const PlanOptions& options, const CostParams& cost) {
  PlannedCompact planned = plan_compact(spec, topology, name, options, cost);
  if (!planned.schedule) return Planned{std::nullopt, std::move(planned.reason)};
  return Planned{to_explicit(*planned.schedule), {}};
}

std::vector<Candidate> cost_table(const CollectiveSpec& spec, const topo::Topology& topology,
                                  const PlanOptions& options, const CostParams& cost) {
  return Selector(cost).table(spec, topology, options);
}

std::optional<std::string> select_algorithm(const CollectiveSpec& spec, const topo::Topology& topology,
                                            const PlanOptions& options, const CostParams& cost) {
  Selector selector(cost);
  const Candidate& c = selector.choose(spec, topology, "auto", options);
  if (!c.support.ok) return std::nullopt;
  return c.algorithm;
}

}  // namespace cclab
