#include "engine/whatif/faults.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "topology/presets.hpp"

namespace cclab {

std::string LinkSelection::key() const {
  return fmt::format("kind={} link={} fraction={} seed={}", kind, link, fraction, seed);
}

std::string LinkDegradation::key() const {
  return fmt::format("{} bandwidth={} latency={}", links.key(), bandwidth_factor, extra_latency_s);
}

namespace {

std::vector<std::size_t> select_links(const topo::Topology& t, const std::string& spec,
                                      const LinkSelection& s) {
  std::vector<std::size_t> chosen;
  if (!s.link.empty()) {
    for (std::size_t l = 0; l < t.num_links(); ++l) {
      const topo::Link& link = t.link(l);
      const std::string reverse = t.vertex(link.b).name + "-" + t.vertex(link.a).name;
      if (t.link_name(l) == s.link || reverse == s.link) chosen.push_back(l);
    }
    if (chosen.empty()) {
      throw ConfigError(fmt::format("no link '{}' in {} (links are named ENDPOINT-ENDPOINT, e.g. '{}')",
                                    s.link, spec, t.num_links() ? t.link_name(0) : "none"));
    }
  } else if (!s.kind.empty()) {
    const auto kind = topo::parse_link_kind(s.kind);
    if (!kind) {
      throw ConfigError(fmt::format("'{}' is not a link kind ({})", s.kind, topo::kLinkKindNames));
    }
    for (std::size_t l = 0; l < t.num_links(); ++l)
      if (t.link(l).kind == *kind) chosen.push_back(l);
    if (chosen.empty()) throw ConfigError(fmt::format("{} has no {} link", spec, s.kind));
  } else if (s.fraction > 0) {
    // Inter-node links: those with an endpoint outside every node (NIC to switch, switch to switch).
    std::vector<std::size_t> fabric;
    for (std::size_t l = 0; l < t.num_links(); ++l)
      if (t.vertex(t.link(l).a).node < 0 || t.vertex(t.link(l).b).node < 0) fabric.push_back(l);
    if (fabric.empty()) throw ConfigError(fmt::format("{} has no inter-node links", spec));
    std::mt19937_64 rng(s.seed);
    std::shuffle(fabric.begin(), fabric.end(), rng);
    const auto n = std::max<std::size_t>(1, static_cast<std::size_t>(s.fraction * fabric.size() + 0.5));
    chosen.assign(fabric.begin(), fabric.begin() + static_cast<std::ptrdiff_t>(std::min(n, fabric.size())));
  }
  return chosen;
}

}  // namespace

ElasticOutcome elastic_outcome(const LostNodes& lost, int gpus_before, int gpus_after, int batch_per_gpu,
                               double step_before_s, double step_after_s) {
  ElasticOutcome o;
  const long every = std::max(1L, lost.checkpoint_every);
  o.gpus_after = gpus_after;
  o.redone_steps = lost.at_step % every;
  o.lost_work_s = static_cast<double>(o.redone_steps) * step_before_s;
  o.recovery_s = lost.restart_s;
  o.step_before_s = step_before_s;
  o.step_after_s = step_after_s;
  o.samples_per_s_before = gpus_before * batch_per_gpu / step_before_s;
  o.samples_per_s_after = gpus_after * batch_per_gpu / step_after_s;
  // The survivors restart from the last checkpoint and process the samples the full world had not reached
  // there, in steps of their smaller global batch (the last one may be partial: rounded up).
  const double samples_per_step_before = static_cast<double>(gpus_before) * batch_per_gpu;
  const double samples_per_step_after = static_cast<double>(gpus_after) * batch_per_gpu;
  const long kept_steps = lost.at_step - o.redone_steps;
  const double remaining = static_cast<double>(lost.steps - kept_steps) * samples_per_step_before;
  o.steps_after = static_cast<long>(std::ceil(remaining / samples_per_step_after - 1e-9));
  // Checkpoints: every `every` steps of the full world up to the loss, then every `every` steps of the
  // survivors, counted from the checkpoint they reloaded (their step counter continues from it).
  o.checkpoints = lost.at_step / every + o.steps_after / every;
  o.checkpoint_s = static_cast<double>(o.checkpoints) * lost.checkpoint_write_s;
  o.healthy_job_s = static_cast<double>(lost.steps) * step_before_s +
                    static_cast<double>(lost.steps / every) * lost.checkpoint_write_s;
  o.job_s = static_cast<double>(lost.at_step) * step_before_s + o.recovery_s +
            static_cast<double>(o.steps_after) * step_after_s + o.checkpoint_s;
  return o;
}

std::string shrunk_topology_spec(const std::string& spec, int lost) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw ConfigError("lost nodes need a preset topology (PRESET:NODES,...), not a file");
  const auto end = spec.find(',', colon);
  const std::string count =
      spec.substr(colon + 1, end == std::string::npos ? std::string::npos : end - colon - 1);
  int nodes = 0;
  try {
    nodes = std::stoi(count);
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("lost nodes need a preset topology with a node count, not '{}'", spec));
  }
  if (lost >= nodes) throw ConfigError(fmt::format("losing {} of {} nodes leaves no world", lost, nodes));
  return fmt::format("{}:{}{}", spec.substr(0, colon), nodes - lost,
                     end == std::string::npos ? "" : spec.substr(end));
}

FaultedTopology faulted_topology(const std::string& spec, const LinkDegradation& degrade,
                                 const LinkFailure& fail) {
  std::shared_ptr<topo::Topology> t = topo::load_topology_mutable(spec);
  FaultedTopology result;
  if (degrade.active()) {
    const auto chosen = select_links(*t, spec, degrade.links);
    for (std::size_t l : chosen)
      t->degrade_link(l, degrade.bandwidth_factor, degrade.extra_latency_s);
    result.degraded_links = static_cast<int>(chosen.size());
  }
  if (fail.active()) {
    const auto chosen = select_links(*t, spec, fail.links);
    for (std::size_t l : chosen)
      t->fail_link(l);
    result.failed_links = static_cast<int>(chosen.size());
    // Every GPU must still reach every other; GPU 0 reaching all of them suffices (links are symmetric).
    if (const auto cut = t->unreachable_gpu(t->gpus()[0])) {
      throw ConfigError(fmt::format("failing {} link(s) partitions {}: no path from {} to {}", chosen.size(),
                                    spec, t->vertex(t->gpus()[0]).name, t->vertex(*cut).name));
    }
  }
  result.topology = t;
  return result;
}

}  // namespace cclab
