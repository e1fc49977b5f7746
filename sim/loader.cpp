// sim::simulate for the `cclab` front: loads libcclab-sim.so (beside the executable) on the first call and
// forwards to it, so that commands that never simulate never load SimGrid (sim/module.hpp says why).
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "common/error.hpp"
#include "common/files.hpp"
#include "sim/module.hpp"

namespace cclab::sim {
namespace {

const ModuleEntry& load_module() {
  static const ModuleEntry* entry = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = beside_executable(kModuleFile);
    // RTLD_LOCAL: the module's own copies of the engine stay private to it.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      throw BackendError("the SimGrid backend could not be loaded from " + path + ": " + dlerror() +
                         " (it is built with cclab where SimGrid is found; the α-β backend needs no module)");
    }
    using EntryFn = const ModuleEntry* (*)();
    auto fn = reinterpret_cast<EntryFn>(dlsym(handle, kModuleEntry));
    if (fn == nullptr) {
      throw BackendError(path + " is not a SimGrid module of this cclab build (no " + kModuleEntry + ")");
    }
    entry = fn();
  });
  return *entry;
}

}  // namespace

RunResult simulate(const Schedule& schedule, const topo::Topology& topology, const SimParams& params) {
  return load_module().simulate(schedule, topology, params);
}

RunResult simulate_compact(const CompactSchedule& schedule, const topo::Topology& topology,
                           const SimParams& params) {
  return load_module().simulate_compact(schedule, topology, params);
}

}  // namespace cclab::sim
