#include "engine/ir/trace.hpp"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace cclab {

void write_chrome_trace(const Schedule& s, const RunResult& run, std::ostream& out,
                        const TraceOptions& options) {
  // Formatted directly: a large schedule has millions of events. Only the label comes from the user.
  const std::string label = nlohmann::json(options.label).dump();
  const std::size_t elem = dtype_size_bytes(s.spec.dtype);
  fmt::memory_buffer buf;
  buf.push_back('[');
  bool first = true;
  auto sep = [&] {
    if (!first) buf.push_back(',');
    first = false;
    buf.push_back('\n');
  };
  for (int r = 0; r < s.world_size() && r < static_cast<int>(run.op_times.size()); ++r) {
    sep();
    fmt::format_to(fmt::appender(buf),
                   R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"rank {}"}}}})", r, r);
    const Program& p = s.ranks[r];
    for (OpId i = 0; i < p.ops.size() && i < run.op_times[r].size(); ++i) {
      const Op& op = p.ops[i];
      const OpTiming& t = run.op_times[r][i];
      sep();
      const std::string name = is_comm(op.kind)     ? fmt::format("{} {} {}", to_string(op.kind),
                                                              op.kind == OpKind::Send ? "->" : "<-", op.peer)
                               : is_switch(op.kind) ? fmt::format("{} group {}", to_string(op.kind), op.peer)
                                                    : std::string(to_string(op.kind));
      fmt::format_to(fmt::appender(buf),
                     R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},)"
                     R"("args":{{"op":{},"bytes":{},"source":{}}}}})",
                     name, s.algorithm, r, op.channel, options.offset_us + t.start_s * 1e6,
                     std::max(0.0, (t.end_s - t.start_s) * 1e6), i, op.count() * elem, label);
    }
  }
  buf.append(std::string_view("\n]\n"));
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

void write_chrome_trace_file(const Schedule& schedule, const RunResult& run, const std::string& path,
                             const TraceOptions& options) {
  std::ofstream out(path);
  if (!out) throw ConfigError(fmt::format("{}: cannot write the timeline", path));
  write_chrome_trace(schedule, run, out, options);
  if (!out) throw ConfigError(fmt::format("{}: write failed", path));
}

void write_chrome_trace_spans(const std::vector<TraceSpan>& spans, const TraceRows& rows, std::ostream& out) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& [pid, name] : rows.processes)
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}});
  for (const auto& [key, name] : rows.threads) {
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", key.first},
                      {"tid", key.second},
                      {"args", {{"name", name}}}});
  }
  for (const TraceSpan& s : spans) {
    if (s.instant) {
      events.push_back({{"ph", "i"},
                        {"s", "p"},  // drawn across the process's rows
                        {"name", s.name},
                        {"cat", s.category},
                        {"pid", s.pid},
                        {"tid", s.tid},
                        {"ts", s.start_s * 1e6},
                        {"args", s.args}});
      continue;
    }
    events.push_back({{"ph", "X"},
                      {"name", s.name},
                      {"cat", s.category},
                      {"pid", s.pid},
                      {"tid", s.tid},
                      {"ts", s.start_s * 1e6},
                      {"dur", std::max(0.0, (s.end_s - s.start_s) * 1e6)},
                      {"args", s.args}});
  }
  out << events.dump(1) << "\n";
}

}  // namespace cclab
