// Ranks as threads of one process: the Transport of the engine's own tests and of the reference run, so that
// they go through the one executor (engine/exec/executor.hpp) that real ranks run over MPI and NCCL.
//
// Sends are eager: isend copies the message into the receiver's queue for (sender, channel) and completes at
// once (the verifier has ruled out races on send buffers, so copying at send time gives the result a
// rendezvous would). A receive completes when its (peer, channel) queue holds a message and every older
// receive of that (peer, channel) has completed: the k-th receive takes the k-th message.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/exec/executor.hpp"
#include "engine/ir/run_result.hpp"

namespace cclab {

struct RankBuffers {
  std::vector<std::byte> input;   // input_count(spec, r) elements (unused when in place)
  std::vector<std::byte> output;  // output_count(spec, r) elements; in place, the larger of input and output
};

// Sizes the buffers of rank r for `spec` (zero-filled).
RankBuffers make_rank_buffers(const CollectiveSpec& spec, int rank, bool in_place);

// Runs every rank of the schedule on a thread of its own, over ranks-as-threads transports, through the one
// executor. Throws the first rank's error (BackendError when a rank stalls; the other ranks then stop too).
// RunResult: wall-clock seconds per rank and overall, and the bytes each rank sent.
RunResult execute_reference(const Schedule& schedule, std::vector<RankBuffers>& buffers,
                            const RunOptions& options = {});

}  // namespace cclab
