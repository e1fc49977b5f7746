// The SimGrid backend as a ScheduleTimer and a ScheduleBatchTimer (engine/model/schedule_timer.hpp): a
// checked compact schedule, simulated op by op, or by pattern with params.by_pattern, its hosts reducing at
// the caller's rates.
#pragma once

#include <limits>
#include <vector>

#include "engine/model/schedule_timer.hpp"
#include "sim/simulator.hpp"

namespace cclab::sim {

inline ScheduleTimer schedule_timer(SimParams params = {}) {
  return [params](const CompactSchedule& schedule, const topo::Topology& topology, const CostParams& cost) {
    SimParams p = params;
    p.compute = cost;
    p.protocol = cost.protocol;
    ScheduleTime time;
    time.seconds = simulate_compact(schedule, topology, p, &time.by_pattern).total_s;
    return time;
  };
}

inline ScheduleBatchTimer schedule_batch_timer(SimParams params = {}) {
  return [params](const std::vector<TimedSchedule>& jobs, int parallel,
                  const std::function<void(std::size_t)>& finished) {
    std::vector<BatchJob> batch;
    batch.reserve(jobs.size());
    for (const TimedSchedule& job : jobs) {
      batch.push_back({job.schedule, job.topology, params});
      batch.back().params.compute = job.cost;
      batch.back().params.protocol = job.cost.protocol;
    }
    std::vector<ScheduleTime> times;
    times.reserve(jobs.size());
    for (const BatchOutcome& outcome : simulate_compact_batch(batch, parallel, finished))
      times.push_back({outcome.result ? outcome.result->total_s : std::numeric_limits<double>::quiet_NaN(),
                       outcome.by_pattern});
    return times;
  };
}

}  // namespace cclab::sim
