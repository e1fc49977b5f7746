// Measurements as nccl-tests reports them, read back: the text table it prints and the JSON file it writes
// with `-J`. Text: any version since 2019 (a `root` column or none, `error` or `#wrong`, per-iteration,
// bitwise and timestamp columns after the in-place ones): columns are found by the header line's names, the
// collective by "# Collective test starting: X_perf" (older logs do not say it: give it), the ranks by the
// "#  Rank N Group ..." device lines. JSON (nccl-tests 2.17 and later): "args"[0] names the program,
// "devices" the ranks, "results" the rows with out_of_place/in_place {time, alg_bw, bus_bw, nwrong}.
// Times are microseconds, bandwidths GB/s (1e9 B/s), as nccl-tests prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/collective.hpp"

namespace cclab {

struct NcclTestsRow {
  std::uint64_t bytes = 0;  // "size": the buffer nccl-tests reports algbw for
  std::uint64_t count = 0;  // "count", elements
  std::string type;         // "float", "half", "bfloat16", ...
  std::string redop;        // "sum", ...; "none" where the collective has none
  double time_us = 0;       // out of place
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<double> in_place_time_us;
};

struct NcclTestsLog {
  std::string source;                    // the file, for messages
  std::optional<Collective> collective;  // from the log, when it says
  std::string program;                   // "all_reduce_perf", when it says
  int ranks = 0;                         // device lines; 0 when the log has none
  std::vector<NcclTestsRow> rows;
};

// By content: a JSON object is the -J file, anything else the text table. ConfigError naming the file and
// line for what cannot be read; a log without rows is an error too.
NcclTestsLog read_nccl_tests_log(const std::string& path);
NcclTestsLog parse_nccl_tests_text(std::string_view text, const std::string& source);
NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& source);

// "all_reduce_perf" (or a path ending in it, or "all_reduce") -> AllReduce; nullopt for collectives cclab
// does not plan (alltoall, sendrecv, ...).
std::optional<Collective> collective_of_program(std::string_view program);
// "float" -> F32, "half" -> F16, "bfloat16" -> BF16; nullopt for the others.
std::optional<DType> dtype_of_nccl_type(std::string_view type);

}  // namespace cclab
