#include "engine/faults.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "topology/presets.hpp"

namespace cclab {

std::string LinkDegradation::key() const {
  return fmt::format("kind={} link={} fraction={} seed={} bandwidth={} latency={}", kind, link, fraction,
                     seed, bandwidth_factor, extra_latency_s);
}

std::shared_ptr<const topo::Topology> degraded_topology(const std::string& spec, const LinkDegradation& d,
                                                        int* affected) {
  std::shared_ptr<topo::Topology> t = topo::load_topology_mutable(spec);
  std::vector<std::size_t> chosen;
  if (!d.link.empty()) {
    for (std::size_t l = 0; l < t->num_links(); ++l) {
      const topo::Link& link = t->link(l);
      const std::string reverse = t->vertex(link.b).name + "-" + t->vertex(link.a).name;
      if (t->link_name(l) == d.link || reverse == d.link) chosen.push_back(l);
    }
    if (chosen.empty()) {
      throw ConfigError(fmt::format("no link '{}' in {} (links are named ENDPOINT-ENDPOINT, e.g. '{}')",
                                    d.link, spec, t->num_links() ? t->link_name(0) : "none"));
    }
  } else if (!d.kind.empty()) {
    const auto kind = topo::parse_link_kind(d.kind);
    if (!kind)
      throw ConfigError(
          fmt::format("'{}' is not a link kind (nvlink, nvswitch, pcie, infiniband, ethernet)", d.kind));
    for (std::size_t l = 0; l < t->num_links(); ++l)
      if (t->link(l).kind == *kind) chosen.push_back(l);
    if (chosen.empty()) throw ConfigError(fmt::format("{} has no {} link", spec, d.kind));
  } else if (d.fraction > 0) {
    // Inter-node links: those with an endpoint outside every node (NIC to switch, switch to switch).
    std::vector<std::size_t> fabric;
    for (std::size_t l = 0; l < t->num_links(); ++l)
      if (t->vertex(t->link(l).a).node < 0 || t->vertex(t->link(l).b).node < 0) fabric.push_back(l);
    if (fabric.empty()) throw ConfigError(fmt::format("{} has no inter-node links to degrade", spec));
    std::mt19937_64 rng(d.seed);
    std::shuffle(fabric.begin(), fabric.end(), rng);
    const auto n = std::max<std::size_t>(1, static_cast<std::size_t>(d.fraction * fabric.size() + 0.5));
    chosen.assign(fabric.begin(), fabric.begin() + static_cast<std::ptrdiff_t>(std::min(n, fabric.size())));
  }
  for (std::size_t l : chosen)
    t->degrade_link(l, d.bandwidth_factor, d.extra_latency_s);
  if (affected) *affected = static_cast<int>(chosen.size());
  return t;
}

}  // namespace cclab
