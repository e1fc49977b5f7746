// The one executor: runs one rank of a verified schedule over a Transport (MPI, NCCL, or ranks as threads),
// with the IR's semantics: the ops of a channel start in program order, an op starts when its deps have
// completed, channels progress independently (so chunked, multi-channel rings pipeline), and transfers are
// nonblocking. Receive-reduce lands in a staging buffer and is reduced into its destination when the message
// has arrived.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/exec/transport.hpp"
#include "engine/ir/schedule.hpp"

namespace cclab {

struct RunOptions {
  bool in_place = false;  // the input lives inside `output` at in_place_offset() (NCCL's convention)
  double timeout_s = 60;  // no progress for this long: BackendError naming the op and the peer it waits on
};

struct RankTiming {
  double total_s = 0;  // from the first op started to the last completed
};

// Buffers the executor reuses from run to run (receive-reduce staging). Keep one per transport and pass it to
// every run: allocating them per run costs an mmap, first-touch page faults and an munmap per chunk, which
// made the first message size of a benchmark ten times slower than the rest.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  class Pool;
  Pool& pool() { return *pool_; }

 private:
  std::unique_ptr<Pool> pool_;
};

// `input` holds input_count(spec, rank) elements (ignored in place); `output` holds output_count(spec, rank)
// (in place: the larger of the two). Avg is finished by scaling the rank's result range.
RankTiming run_rank(const Schedule& schedule, Transport& transport, const void* input, void* output,
                    const RunOptions& options = {}, Workspace* workspace = nullptr);

// A schedule's ops run on one rank, for sizing scratch and staging ahead of time.
std::size_t scratch_bytes(const Schedule& schedule, int rank);

}  // namespace cclab
