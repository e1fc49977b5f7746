// The SimGrid backend as the predict use case's ScheduleTimer (engine/whatif/predict.hpp): a checked compact
// schedule, expanded and simulated.
#pragma once

#include "engine/whatif/predict.hpp"
#include "sim/simulator.hpp"

namespace cclab::sim {

inline ScheduleTimer schedule_timer(SimParams params = {}) {
  return [params](const CompactSchedule& schedule, const topo::Topology& topology) {
    return simulate(to_explicit(schedule), topology, params).total_s;
  };
}

}  // namespace cclab::sim
