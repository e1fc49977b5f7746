// The seam between the engine and its time backends: the time of one checked compact schedule on a
// topology. The α-β model is the engine's own (engine/model/compact_cost.hpp); SimGrid provides one from
// above (sim/timer.hpp), injected by the commands, so that engine/ and real/ never depend on sim/.
#pragma once

#include <functional>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/model/cost.hpp"
#include "engine/model/protocol.hpp"
#include "topology/topology.hpp"

namespace cclab {

// What a backend made of one schedule: its time, and whether a simulator solved it pattern by pattern (false:
// op by op, or not a simulator).
struct ScheduleTime {
  double seconds = 0;
  bool by_pattern = false;
};

// `cost`: the compute rates the α-β model used (the reduction rate is the GPU's, shared by its channels in a
// simulation), with a concrete protocol (not Auto): what the caller's α-β selection chose.
using ScheduleTimer = std::function<ScheduleTime(const CompactSchedule& schedule,
                                                 const topo::Topology& topology, const CostParams& cost)>;

// Several schedules timed in one call, so that a backend can time them side by side (SimGrid: a process
// each, `parallel` at once). Times in the jobs' order, each what ScheduleTimer would return; NaN seconds
// where the timing failed (timing that schedule alone says why). `finished`, when given, is called as each
// job ends (for progress), on the calling thread.
struct TimedSchedule {
  const CompactSchedule* schedule = nullptr;
  const topo::Topology* topology = nullptr;
  CostParams cost;  // as ScheduleTimer's
};
using ScheduleBatchTimer =
    std::function<std::vector<ScheduleTime>(const std::vector<TimedSchedule>& jobs, int parallel,
                                            const std::function<void(std::size_t job)>& finished)>;

}  // namespace cclab
