// Schedules as JSON, for `cclab plan --dump` and `cclab verify FILE`:
//   {"collective": "allreduce", "algorithm": "ring", "world_size": 8, "count": 1024, "dtype": "f32", "op": "sum",
//    "root": 0, "params": {...},
//    "ranks": [{"rank": 0, "scratch": 0,
//               "ops": [{"kind": "send", "peer": 1, "channel": 0,
//                        "src": {"buffer": "input", "offset": 0, "count": 128}, "deps": []}, ...]}, ...]}
// "src" appears on ops that read it, "dst" on ops that write it. Loading checks every field and names it
// (e.g. "p.json: ranks[3].ops[5].peer: expected an integer").
#pragma once

#include <string>

#include "engine/schedule.hpp"

namespace cclab {

std::string schedule_to_json(const Schedule& schedule, int indent = -1);
Schedule schedule_from_json(const std::string& text, const std::string& source = "<string>");
Schedule load_schedule_file(const std::string& path);
void save_schedule_file(const Schedule& schedule, const std::string& path);

}  // namespace cclab
