// sim::simulate for the `cclab` front: loads libcclab-sim.so (beside the executable) on the first call and
// forwards to it, so that commands that never simulate never load SimGrid (sim/module.hpp says why).
#include <mutex>
#include <string>

#include "common/module.hpp"
#include "sim/module.hpp"

namespace cclab::sim {
namespace {

const ModuleEntry& load_module() {
  static const ModuleEntry* entry = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    entry = static_cast<const ModuleEntry*>(
        load_module_entry(kModuleFile, kModuleEntry, "the SimGrid backend",
                          "it is built with cclab where SimGrid is found; the α-β backend needs no module"));
  });
  return *entry;
}

}  // namespace

RunResult simulate(const Schedule& schedule, const topo::Topology& topology, const SimParams& params) {
  return load_module().simulate(schedule, topology, params);
}

RunResult simulate_compact(const CompactSchedule& schedule, const topo::Topology& topology,
                           const SimParams& params, bool* ran_by_pattern) {
  return load_module().simulate_compact(schedule, topology, params, ran_by_pattern);
}

std::vector<BatchOutcome> simulate_compact_batch(const std::vector<BatchJob>& jobs, int parallel,
                                                 const BatchProgress& finished) {
  return load_module().simulate_compact_batch(jobs, parallel, finished);
}

}  // namespace cclab::sim
