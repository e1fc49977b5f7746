// The SimGrid backend as a ScheduleTimer (engine/model/schedule_timer.hpp): a checked compact schedule,
// simulated op by op, or by pattern with params.by_pattern.
#pragma once

#include "engine/model/schedule_timer.hpp"
#include "sim/simulator.hpp"

namespace cclab::sim {

inline ScheduleTimer schedule_timer(SimParams params = {}) {
  return [params](const CompactSchedule& schedule, const topo::Topology& topology, Protocol protocol) {
    SimParams p = params;
    p.protocol = protocol;
    return simulate_compact(schedule, topology, p).total_s;
  };
}

}  // namespace cclab::sim
