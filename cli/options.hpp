// Options several subcommands share: topology, collective, dtype, op, root, chunk, channels, cost parameters.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "engine/model/cost.hpp"
#include "engine/plan/registry.hpp"
#include "engine/whatif/predict.hpp"
#include "topology/topology.hpp"

namespace cclab::cli {

struct CollectiveArgs {
  std::string topology = "dgx_a100:32";
  std::string collective = "allreduce";
  std::string dtype = "f32";
  std::string op = "sum";
  int root = 0;
  std::string chunk = "1MiB";
  int channels = 0;
  std::string inter = "ring";
  std::string reduce_bw = "500GB/s";
  std::string protocol = "auto";  // what a message costs beyond its route (engine/model/protocol.hpp)

  void add_to(CLI::App& cmd);
  // The spec for `size` bytes over the topology's GPUs; ConfigError for bad names or sizes.
  CollectiveSpec spec(const topo::Topology& topology, const std::string& size) const;
  PlanOptions plan_options() const;
  CostParams cost_params() const;
};

// The SimGrid backend as predict's timers, one schedule at a time and many side by side (loaded on first
// use); left empty where cclab was built without SimGrid (points with `backend: sim` are then refused with
// the reason). `by_pattern`: the pattern-level mode (sim/simulator.hpp), predict's and regress's default
// (`--exact` turns it off).
void use_simulator(PredictOptions& options, bool by_pattern);

}  // namespace cclab::cli
