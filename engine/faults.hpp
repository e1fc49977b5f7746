// What-if faults of a scenario (the `faults:` section, docs/scenario-format.md): degraded links and
// stragglers. Failed links and lost nodes (elastic shrink) are not modelled yet.
//
// Degraded links: bandwidth x factor and extra latency on the links chosen by kind ("infiniband"), by name
// ("node0/nic0-leaf0", the endpoints' names as `cclab topology show` lists them), or as a random fraction of
// all inter-node links with a seed (reproducible). Routing sees the degraded links, so least-cost paths may
// move around them, as adaptive routing would.
//
// Stragglers: GPUs whose compute takes `factor` times as long (thermal throttling, a noisy neighbour, a
// slower part). In synchronous data parallelism every bucket's allreduce waits for the last rank to produce
// its gradients, so the slowest GPU sets the pace of the whole step: the step runs at the straggler's compute
// time however many GPUs straggle, while the one-GPU reference (speedup, efficiency) keeps the healthy speed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "topology/topology.hpp"

namespace cclab {

struct LinkDegradation {
  std::string kind;     // a link kind, or
  std::string link;     // one link by name, or
  double fraction = 0;  // this fraction of the inter-node links, picked with `seed`
  std::uint64_t seed = 1;
  double bandwidth_factor = 1;
  double extra_latency_s = 0;

  bool active() const { return !kind.empty() || !link.empty() || fraction > 0; }
  std::string key() const;  // identifies the degradation (cache key, descriptions)
};

struct Stragglers {
  int gpus = 0;
  double factor = 1;
  bool active() const { return gpus > 0 && factor != 1; }
};

// The topology `spec` with `d` applied; `affected` receives how many links it changed. ConfigError when the
// selection matches no link (naming what would be valid).
std::shared_ptr<const topo::Topology> degraded_topology(const std::string& spec, const LinkDegradation& d,
                                                        int* affected = nullptr);

}  // namespace cclab
