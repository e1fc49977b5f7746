// The verifier: every schedule passes it before any backend runs it. It checks, in order:
//   1. structure: peers, chunk bounds, counts, deps in range and acyclic, send/receive matching
//      (progress.hpp);
//   2. races: two ops of a rank that touch the same elements, one of them writing, must be ordered by the
//      rank's deps (one a transitive dep of the other);
//   3. progress: a walk of the IR's semantics completes every op (no deadlock);
//   4. the collective's postcondition, symbolically: each element carries the set of ranks whose input it
//      sums (as a 64-bit fingerprint plus a count) and the element index it came from. Allreduce: every rank
//      ends with every element reduced over all ranks exactly once; reduce_scatter: its block; allgather:
//      block b from rank b; broadcast: the root's data; reduce: the reduction at the root; alltoall: block b
//      from block r of rank b; gather: allgather's at the root; scatter: its block of the root's input;
//      sendrecv: rank r − 1's input.
// It runs both out-of-place and in-place (input and output aliased as in NCCL), since backends may do either;
// a collective without an in-place form (alltoall, sendrecv) out-of-place only.
// docs/algorithms.md says how it stays fast at millions of ops.
#pragma once

#include <optional>
#include <string>

#include "engine/ir/schedule.hpp"

namespace cclab {

struct VerifyOptions {
  bool out_of_place = true;
  bool in_place = true;
  // Hold the symbolic contents in the general interval map even where one value per segment would do (the
  // fast path). For tests, which check that both reach the same verdict.
  bool general_store = false;
};

// nullopt when the schedule is valid; else the first problem, naming the rank and op (or rank and output
// range).
std::optional<std::string> verify(const Schedule& schedule, const VerifyOptions& options = {});

// Throws PlanError with the verifier's message.
void verify_or_throw(const Schedule& schedule, const VerifyOptions& options = {});

}  // namespace cclab
