// Chrome trace (the JSON array of "X" events that Perfetto and chrome://tracing open) of one run of a
// schedule, from any backend's RunResult: one process per rank, one thread per channel, one event per op,
// times in µs. The α-β model, SimGrid and the real transports all write their timelines through this one
// writer.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "engine/ir/run_result.hpp"
#include "engine/ir/schedule.hpp"

namespace cclab {

struct TraceOptions {
  std::string label;     // shown in every event's args ("sim", "alpha-beta", "mpi", ...)
  double offset_us = 0;  // added to every timestamp (to place a collective inside a longer timeline)
};

void write_chrome_trace(const Schedule& schedule, const RunResult& run, std::ostream& out,
                        const TraceOptions& options = {});
void write_chrome_trace_file(const Schedule& schedule, const RunResult& run, const std::string& path,
                             const TraceOptions& options = {});

// Coarser timelines (a training step: compute, buckets) as spans on rows: process = rank, thread = stream.
struct TraceSpan {
  int pid = 0;
  int tid = 0;
  std::string name;
  std::string category;
  double start_s = 0, end_s = 0;
  std::map<std::string, std::string> args;
  bool instant = false;  // an event at start_s ("i"), not a span
};
struct TraceRows {
  std::map<int, std::string> processes;                // pid -> name ("rank 3")
  std::map<std::pair<int, int>, std::string> threads;  // (pid, tid) -> name ("compute")
};
void write_chrome_trace_spans(const std::vector<TraceSpan>& spans, const TraceRows& rows, std::ostream& out);

}  // namespace cclab
