#include "engine/measure/log_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/measure/compare.hpp"

namespace cclab {
namespace {

// Minimum of a unimodal f on [lo, hi] to a relative width of about 1e-4 (30 steps of the golden ratio).
template <typename F>
double golden_minimum(double lo, double hi, F&& f) {
  const double r = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi, c = b - r * (b - a), d = a + r * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < 30; ++i) {
    if (fc <= fd) {
      b = d, d = c, fd = fc, c = b - r * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd, d = a + r * (b - a), fd = f(d);
    }
  }
  return fc <= fd ? c : d;
}

}  // namespace

topo::LinkKind bounding_link_kind(const topo::Topology& t) {
  using topo::LinkKind;
  using topo::VertexKind;
  if (t.num_nodes() > 1) {
    // The network: the kind of a link between a NIC and a switch.
    for (const topo::Link& l : t.links()) {
      const VertexKind a = t.vertex(l.a).kind, b = t.vertex(l.b).kind;
      if ((a == VertexKind::Nic && b == VertexKind::Switch) ||
          (a == VertexKind::Switch && b == VertexKind::Nic))
        return l.kind;
    }
  }
  // The fastest link kind leaving the first GPU: what its intra-node collectives run on.
  const topo::VertexId gpu = t.gpus().at(0);
  std::optional<LinkKind> best;
  double best_Bps = 0;
  for (const topo::Link& l : t.links()) {
    if ((l.a == gpu || l.b == gpu) && l.bandwidth_Bps > best_Bps) best = l.kind, best_Bps = l.bandwidth_Bps;
  }
  if (!best) throw ConfigError(fmt::format("topology '{}': its first GPU has no link", t.name()));
  return *best;
}

LogFit fit_link_model(const std::vector<NcclTestsLog>& logs, topo::Topology& topology,
                      std::optional<Collective> collective, const std::string& algorithm,
                      const PlanOptions& options, const CostParams& cost,
                      const std::vector<std::map<std::uint64_t, RowChoice>>& by_size) {
  LogFit fit;
  fit.kind = bounding_link_kind(topology);
  fit.before = topology.link_model(fit.kind);
  auto compare_all = [&] {
    std::vector<Comparison> out;
    for (std::size_t i = 0; i < logs.size(); ++i)
      out.push_back(
          compare_with_model(logs[i], topology, collective, algorithm, options, cost,
                             i < by_size.size() ? by_size[i] : std::map<std::uint64_t, RowChoice>{}));
    return out;
  };
  // One median over the rows of every log.
  auto median_error = [](const std::vector<Comparison>& all) {
    Comparison rows;
    for (const Comparison& c : all)
      rows.rows.insert(rows.rows.end(), c.rows.begin(), c.rows.end());
    return median_abs_error(rows, 0, UINT64_MAX).value_or(0.0);
  };
  const auto before = compare_all();
  fit.median_error_before = median_error(before);
  for (const Comparison& c : before)
    fit.rows += static_cast<int>(c.rows.size());
  auto objective = [&](double efficiency, double overhead_s) {
    topology.set_link_model(fit.kind, topo::LinkModel{efficiency, overhead_s});
    double sum = 0;
    for (const Comparison& c : compare_all()) {
      for (const ComparedRow& r : c.rows) {
        if (r.measured.time_us <= 0 || r.predicted_s <= 0) continue;
        const double d = std::log(r.predicted_s * 1e6 / r.measured.time_us);
        sum += d * d;
      }
    }
    return sum;
  };
  auto best_efficiency = [&](double overhead_s) {
    return golden_minimum(0.02, 1.0, [&](double e) { return objective(e, overhead_s); });
  };
  const double overhead_s =
      golden_minimum(0.0, 100e-6, [&](double o) { return objective(best_efficiency(o), o); });
  fit.after = topo::LinkModel{best_efficiency(overhead_s), overhead_s};
  // The search is over a model with max() in it (a protocol's step latency hides small overheads), so it can
  // end on a worse point than it started from: never return a fit worse than the model it was given.
  if (objective(fit.after.efficiency, fit.after.overhead_s) >
      objective(fit.before.efficiency, fit.before.overhead_s)) {
    fit.after = fit.before;
  }
  topology.set_link_model(fit.kind, fit.after);
  const std::vector<Comparison> after = compare_all();
  fit.median_error_after = median_error(after);
  for (const Comparison& c : after)
    for (const ComparedRow& r : c.rows)
      if (std::find(fit.planned.begin(), fit.planned.end(), r.algorithm) == fit.planned.end())
        fit.planned.push_back(r.algorithm);
  return fit;
}

}  // namespace cclab
