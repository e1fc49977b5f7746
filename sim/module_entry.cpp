// The one symbol libcclab-sim.so exports for the loader (sim/loader.cpp).
#include "sim/module.hpp"

extern "C" __attribute__((visibility("default"))) const void* cclab_sim_module_entry_v5() {
  static const cclab::sim::ModuleEntry entry{&cclab::sim::simulate, &cclab::sim::simulate_compact,
                                             &cclab::sim::simulate_compact_batch};
  return &entry;
}
