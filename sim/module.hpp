// The SimGrid backend as a loadable module (libcclab-sim.so). SimGrid and the ns-3 libraries it links take
// ~45 ms to load and initialise, more than the whole start-up budget of a `cclab` command, so the `cclab`
// front does not link them: it links cclab_sim_loader instead, whose sim::simulate loads this module on its
// first call. Executables that load heavy libraries anyway (cclab-real, tests, benchmarks) link cclab_sim.
#pragma once

#include "sim/simulator.hpp"

namespace cclab::sim {

// What the module exports, looked up by name (kModuleEntry) with dlsym. The version is part of the name: a
// front and a module from different builds refuse each other instead of calling through a wrong layout.
struct ModuleEntry {
  RunResult (*simulate)(const Schedule& schedule, const topo::Topology& topology, const SimParams& params);
  RunResult (*simulate_compact)(const CompactSchedule& schedule, const topo::Topology& topology,
                                const SimParams& params, bool* ran_by_pattern);
  std::vector<BatchOutcome> (*simulate_compact_batch)(const std::vector<BatchJob>& jobs, int parallel,
                                                      const BatchProgress& finished);
};
inline constexpr const char* kModuleFile = "libcclab-sim.so";
inline constexpr const char* kModuleEntry = "cclab_sim_module_entry_v5";

}  // namespace cclab::sim
