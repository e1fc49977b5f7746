// Schedules as JSON, for `cclab plan --dump` and `cclab verify FILE`:
//   {"collective": "allreduce", "algorithm": "ring", "world_size": 8, "count": 1024, "dtype": "f32", "op":
//   "sum",
//    "root": 0, "params": {...},
//    "ranks": [{"rank": 0, "scratch": 0,
//               "ops": [{"kind": "send", "peer": 1, "channel": 0, "src": ["input", 0, 128]},
//                       {"kind": "recv_reduce", "peer": 7, "channel": 0, "src": ["input", 128, 128],
//                        "dst": ["output", 128, 128], "deps": [0]}, ...]}, ...]}
// A chunk is [buffer, offset, count] in elements. "src" appears on ops that read it, "dst" on ops that write
// it, "deps" when there are any. Loading checks every field and names it ("p.json: ranks[3].ops[5].peer:
// ...").
#pragma once

#include <string>

#include "engine/schedule.hpp"

namespace cclab {

std::string schedule_to_json(const Schedule& schedule);
Schedule schedule_from_json(const std::string& text, const std::string& source = "<string>");
Schedule load_schedule_file(const std::string& path);
void save_schedule_file(const Schedule& schedule, const std::string& path);

}  // namespace cclab
