// Chrome trace (the JSON array of "X" events that Perfetto and chrome://tracing open) of one run of a
// schedule, from any backend's RunResult: one process per rank, one thread per channel, one event per op,
// times in µs. The α-β model, SimGrid and the real transports all write their timelines through this one
// writer.
#pragma once

#include <ostream>
#include <string>

#include "engine/run_result.hpp"
#include "engine/schedule.hpp"

namespace cclab {

struct TraceOptions {
  std::string label;     // shown in every event's args ("sim", "alpha-beta", "mpi", ...)
  double offset_us = 0;  // added to every timestamp (to place a collective inside a longer timeline)
};

void write_chrome_trace(const Schedule& schedule, const RunResult& run, std::ostream& out,
                        const TraceOptions& options = {});
void write_chrome_trace_file(const Schedule& schedule, const RunResult& run, const std::string& path,
                             const TraceOptions& options = {});

}  // namespace cclab
