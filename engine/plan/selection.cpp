#include "engine/plan/selection.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/model/lower_bound.hpp"
#include "engine/model/nccl_tuning.hpp"
#include "engine/plan/ring_search.hpp"

namespace cclab {

Selector::Selector(CostParams cost, OnPlanned on_planned) : cost_(cost), on_planned_(std::move(on_planned)) {}

Selector::Key Selector::key_of(const CollectiveSpec& spec, const topo::Topology& topology,
                               const PlanOptions& options, std::string_view name) {
  return {&topology,       spec.collective,     spec.count,       spec.dtype,    spec.op,          spec.root,
          spec.world_size, options.chunk_bytes, options.channels, options.inter, std::string(name)};
}

const Candidate& Selector::candidate(const Algorithm& algorithm, const CollectiveSpec& spec,
                                     const topo::Topology& topology, const PlanOptions& options,
                                     std::shared_ptr<const CompactSchedule> planned) {
  const Key key = key_of(spec, topology, options, algorithm.name);
  if (auto hit = cache_.find(key); hit != cache_.end()) return hit->second;
  Candidate c;
  c.algorithm = algorithm.name;
  c.support = algorithm.supports(spec, topology, options);
  if (c.support.ok) {
    // A candidate whose plan or model would not fit the memory budget (an explicit pass of millions of ops,
    // a tree lane walked as ops, the send table of a huge ring) is reported as not costed instead of failing
    // the whole selection.
    std::shared_ptr<const CompactSchedule> schedule = std::move(planned);
    try {
      if (!schedule)
        schedule = std::make_shared<const CompactSchedule>(algorithm.compact(spec, topology, options));
    } catch (const ConfigError& e) {
      c.support = Support::no(fmt::format("not planned: {}", e.what()));
    }
    if (schedule && on_planned_) on_planned_(*schedule);
    if (schedule) {
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

std::vector<Candidate> Selector::auto_table(const CollectiveSpec& spec, const topo::Topology& topology,
                                            const PlanOptions& options, std::string_view selection) {
  const std::optional<std::vector<const Algorithm*>> candidates =
      selection_candidates(spec.collective, selection);
  if (!candidates) require_algorithm(spec.collective, selection);  // a single algorithm, or unknown
  CCLAB_ENFORCE(candidates, "auto_table given the algorithm '{}', not a selection", selection);
  const std::vector<const Algorithm*>& list = *candidates;
  std::vector<std::optional<Candidate>> rows(list.size());
  // Candidates not costed yet, with their bounds (and plans, where the bound needed one).
  struct Pending {
    std::size_t index;
    double bound_s;
    std::shared_ptr<const CompactSchedule> planned;
  };
  std::vector<Pending> pending;
  std::optional<MessageBounds> bounds;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Algorithm& a = *list[i];
    if (auto hit = cache_.find(key_of(spec, topology, options, a.name)); hit != cache_.end()) {
      rows[i] = hit->second;
      continue;
    }
    if (!a.supports(spec, topology, options).ok) {
      rows[i] = candidate(a, spec, topology, options);
      continue;
    }
    if (a.unplanned_ops) {
      if (const std::uint64_t ops = a.unplanned_ops(spec, topology, options); ops > kAutoMaxExplicitOps) {
        Candidate c;
        c.algorithm = a.name;
        c.support = Support::no(fmt::format(
            "not costed by auto: its cost walk expands about {:.1f} M ops (auto's limit {:.1f} M); "
            "--algo {} costs it",
            static_cast<double>(ops) / 1e6, static_cast<double>(kAutoMaxExplicitOps) / 1e6, a.name));
        rows[i] = std::move(c);
        continue;
      }
    }
    if (!bounds) bounds.emplace(topology, cost_);
    if (a.unplanned_bound) {
      pending.push_back({i, a.unplanned_bound(spec, *bounds), nullptr});
    } else {
      auto planned = std::make_shared<const CompactSchedule>(a.compact(spec, topology, options));
      pending.push_back({i, compact_lower_bound_s(*planned, *bounds), std::move(planned)});
    }
  }
  // The best so far, ties to the earlier row (as choose's registry order decides them).
  std::optional<std::size_t> best;
  auto consider = [&](std::size_t i) {
    if (rows[i]->support.ok && (!best || rows[i]->time_s < rows[*best]->time_s ||
                                (rows[i]->time_s == rows[*best]->time_s && i < *best)))
      best = i;
  };
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i]) consider(i);
  std::stable_sort(pending.begin(), pending.end(),
                   [](const Pending& x, const Pending& y) { return x.bound_s < y.bound_s; });
  for (Pending& p : pending) {
    const bool cannot_win =
        best && (p.bound_s > rows[*best]->time_s || (p.bound_s == rows[*best]->time_s && p.index > *best));
    if (cannot_win) {
      Candidate c;
      c.algorithm = list[p.index]->name;
      c.pruned = true;
      c.support = Support::no(fmt::format("not costed: at least {:.6g} s (lower bound), {} takes {:.6g} s",
                                          p.bound_s, rows[*best]->algorithm, rows[*best]->time_s));
      rows[p.index] = std::move(c);
      continue;
    }
    rows[p.index] = candidate(*list[p.index], spec, topology, options, std::move(p.planned));
    consider(p.index);
  }
  std::vector<Candidate> out;
  for (auto& row : rows)
    out.push_back(std::move(*row));
  return out;
}

const Candidate* Selector::nccl_choice(const CollectiveSpec& spec, const topo::Topology& topology,
                                       std::string_view name, const PlanOptions& options, std::string& note) {
  const Key key = key_of(spec, topology, options, name);
  if (auto hit = cache_.find(key); hit != cache_.end()) return &hit->second;
  const std::optional<std::vector<const Algorithm*>> list = selection_candidates(spec.collective, name);
  if (!list) return nullptr;
  // What applies, by NCCL's algorithm.
  std::vector<std::pair<NcclAlgo, const Algorithm*>> applying;
  for (const Algorithm* a : *list) {
    if (a->nccl_p2p) {
      note = "NCCL picks a send/receive's protocol per transfer, not by its tuning model";
      return nullptr;
    }
    if (!a->supports(spec, topology, options).ok) continue;
    CCLAB_ENFORCE(a->nccl, "algorithm {} in an NCCL selection has no NCCL algorithm", a->name);
    applying.emplace_back(*a->nccl, a);
  }
  if (applying.empty()) return nullptr;  // choose() says why none applies
  const planners::NcclSearch search = planners::nccl_search(topology);
  if (!search.comm) {
    note = fmt::format("cclab cannot reproduce NCCL's graphs here: {}", search.why_not);
    return nullptr;
  }
  const NcclTuningModel model(*search.comm);
  // NCCL's loop: algorithms in its order, protocols LL, LL128, Simple, the strictly least time wins; the
  // protocols the run allows (NCCL_PROTO: CostParams::auto_protocols, or the one protocol asked for).
  std::stable_sort(applying.begin(), applying.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Candidate::NcclEstimate> estimates;
  const Algorithm* picked = nullptr;
  Protocol picked_protocol = Protocol::Simple;
  double best_us = 0;
  for (const auto& [algo, a] : applying) {
    bool priced = false;
    for (const Protocol p : kNcclProtocols) {
      const bool allowed = cost_.protocol == Protocol::Auto
                               ? (cost_.auto_protocols & protocol_bit(p)) != 0
                               : cost_.protocol == p || cost_.protocol == Protocol::Raw;
      if (!allowed) continue;
      const std::optional<double> t = model.time_us(spec.collective, algo, p, spec.bytes());
      if (!t) continue;
      priced = true;
      estimates.push_back({a->name, p, *t});
      if (!picked || *t < best_us) picked = a, picked_protocol = p, best_us = *t;
    }
    // CollNet, and NVLS across nodes, need graphs cclab does not reproduce: NCCL would price them.
    const bool unknown_graph = algo == NcclAlgo::CollNetDirect || algo == NcclAlgo::CollNetChain ||
                               (algo == NcclAlgo::Nvls && search.comm->nodes > 1);
    if (!priced && unknown_graph) {
      note = fmt::format("cclab does not reproduce NCCL's {} graph, which its tuning model would price",
                         nccl_algo_name(algo));
      return nullptr;
    }
  }
  if (!picked) {
    note = "NCCL's tuning model prices none of the algorithms that apply";
    return nullptr;
  }
  Candidate chosen = candidate(*picked, spec, topology, options);
  if (chosen.support.ok) {
    const auto it = std::find_if(chosen.by_protocol.begin(), chosen.by_protocol.end(),
                                 [&](const auto& row) { return row.first == picked_protocol; });
    if (it != chosen.by_protocol.end()) {
      chosen.protocol = it->first;
      chosen.time_s = it->second;
    } else if (cost_.protocol == Protocol::Auto) {
      chosen.nccl_note = fmt::format("cclab does not run {} under {} here; costed under {}", picked->name,
                                     to_string(picked_protocol), to_string(chosen.protocol));
    }
  }
  chosen.nccl_estimates = std::move(estimates);
  return &cache_.insert_or_assign(key, std::move(chosen)).first->second;
}

const Candidate& Selector::choose(const CollectiveSpec& spec, const topo::Topology& topology,
                                  std::string_view name, const PlanOptions& options) {
  if (const Algorithm* named = find_algorithm(spec.collective, name))
    return candidate(*named, spec, topology, options);
  std::string nccl_note;
  if (name != "auto") {
    if (const Candidate* picked = nccl_choice(spec, topology, name, options, nccl_note)) return *picked;
  }
  const Candidate* best = nullptr;
  std::vector<std::string> why_not;  // each candidate's reason, for the error when none applies
  for (const Candidate& row : auto_table(spec, topology, options, name)) {
    if (!row.support.ok) {
      why_not.push_back(fmt::format("{}: {}", row.algorithm, row.support.reason));
      continue;
    }
    const Candidate& c = cache_.at(key_of(spec, topology, options, row.algorithm));
    if (!best || c.time_s < best->time_s) best = &c;
  }
  const Key key = key_of(spec, topology, options, name);
  if (best && nccl_note.empty()) return *best;
  if (best) {
    Candidate cheapest_one = *best;
    cheapest_one.nccl_note = std::move(nccl_note);
    return cache_.insert_or_assign(key, std::move(cheapest_one)).first->second;
  }
  Candidate none;
  none.algorithm = std::string(name);
  none.support = Support::no(
      fmt::format("{} ({})",
                  name == "auto" ? fmt::format("no {} algorithm applies", to_string(spec.collective))
                                 : fmt::format("none of the {} algorithms that '{}' selects applies",
                                               to_string(spec.collective), name),
                  fmt::join(why_not, "; ")));
  // No algorithm is named like a selection (selection_candidates), so the key is free.
  return cache_.insert_or_assign(key, std::move(none)).first->second;
}

PlannedCompact plan_compact(const CollectiveSpec& spec, const topo::Topology& topology, std::string_view name,
                            const PlanOptions& options, const CostParams& cost) {
  if (is_selection(spec.collective, name)) {
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
