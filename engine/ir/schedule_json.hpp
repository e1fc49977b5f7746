// Schedules as JSON, for `cclab plan --dump` and `cclab verify FILE`:
//   {"collective": "allreduce", "algorithm": "ring", "world_size": 8, "count": 1024, "dtype": "f32", "op":
//   "sum",
//    "root": 0, "params": {...},
//    "ranks": [{"rank": 0, "scratch": 0,
//               "ops": [{"kind": "send", "peer": 1, "channel": 0, "src": ["input", 0, 128]},
//                       {"kind": "recv_reduce", "peer": 7, "channel": 0, "src": ["input", 128, 128],
//                        "dst": ["output", 128, 128], "deps": [0]}, ...]}, ...]}
// The explicit form's params are text; "lanes", "channels" and "kernels" among them are read as integers.
// A chunk is [buffer, offset, count] in elements. "src" appears on ops that read it, "dst" on ops that write
// it, "deps" when there are any. Loading checks every field and names it ("p.json: ranks[3].ops[5].peer:
// ...").
#pragma once

#include <string>

#include "engine/ir/compact.hpp"
#include "engine/ir/schedule.hpp"

namespace cclab {

std::string schedule_to_json(const Schedule& schedule);
Schedule schedule_from_json(const std::string& text, const std::string& source = "<string>");
Schedule load_schedule_file(const std::string& path);
void save_schedule_file(const Schedule& schedule, const std::string& path);

// The compact form (engine/ir/compact.hpp), `cclab plan --dump`:
//   {"form": "compact", "collective": ..., (the spec as above), "params": {"chunk": N, "channels": N,
//    "lanes_per_channel": N, "inter": "ring", "kernels": N (when not 1)},
//    "passes": [{"kind": "ring", "reduce_scatter": true, "allgather": true, "count": N, "chunk_elems": N,
//                "scratch": N, "rings": [[0, 1, 2, 3], ...],
//                "roles": {"contribution": ["input", false], "partial": [...], "reduced": [...],
//                          "gathered": [...]}},
//               {"kind": "tree", "count": N, "chunk_elems": N, "parents": [[-1, 0, 0, 1], ...]},
//               {"kind": "explicit", "schedule": {an explicit schedule as above}}],
//    "phases": [[{"pass": 0, "ranks": [0, 1, 2, 3], "input": ["input", 0, 0, 0],
//                 "output": ["output", offset, member_blocks, blocks_of]}, ...], ...]}
// Lanes name their pass by index, so lanes that share one (every node's ring) share it again when loaded.
// "form" comes first: that is how a reader tells the two forms apart.
bool is_compact_json(std::string_view text);
std::string compact_to_json(const CompactSchedule& schedule);
CompactSchedule compact_from_json(const std::string& text, const std::string& source = "<string>");
void save_compact_file(const CompactSchedule& schedule, const std::string& path);
// Either form: a compact file as it is, an explicit one as a single explicit pass.
CompactSchedule load_any_schedule_file(const std::string& path);

}  // namespace cclab
