// The reference executor: every rank is a thread of this process, moving real data through a verified
// schedule with the IR's semantics (per-channel start order, deps, k-th send matches k-th receive). It is the
// oracle the other backends are compared with, and the data path of the engine's own tests.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/ir/run_result.hpp"
#include "engine/ir/schedule.hpp"

namespace cclab {

struct RankBuffers {
  std::vector<std::byte> input;   // input_count(spec, r) elements (unused when in place)
  std::vector<std::byte> output;  // output_count(spec, r) elements; in place, the larger of input and output
};

struct ExecOptions {
  // In place: the input lives inside `output` (NCCL's convention; see in_place_offset()), and `input` is
  // ignored. For reduce_scatter in place, `output` holds the whole input and the result lands at the rank's
  // block.
  bool in_place = false;
  double stall_timeout_s = 60;  // a rank that cannot progress this long fails the run (a bug, not user input)
};

// Sizes the buffers of rank r for `spec` (zero-filled).
RankBuffers make_rank_buffers(const CollectiveSpec& spec, int rank, bool in_place);

// Runs the schedule. Throws BackendError if a rank stalls or fails; Avg is finished by dividing the result
// range.
RunResult execute_reference(const Schedule& schedule, std::vector<RankBuffers>& buffers,
                            const ExecOptions& options = {});

}  // namespace cclab
