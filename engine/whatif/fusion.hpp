// Gradient fusion: which gradients travel together in one collective. One rule set, shared by the step model
// (engine/whatif/step_model.cpp) and the live training loop (real/train/), so that a prediction and the run
// it is checked against fuse the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cclab {

struct FusionRule {
  std::uint64_t first_cap_bytes = 1ULL << 20;  // the first bucket's cap
  std::uint64_t cap_bytes = 25ULL << 20;       // every later bucket's cap
  // false, PyTorch DDP (compute_bucket_assignment_by_size): a gradient joins the open bucket, which closes
  // once it holds at least its cap, so a bucket may pass its cap by its last gradient. true, Horovod's fusion
  // buffer: a gradient that would make the bucket pass its cap opens a new bucket instead (a single gradient
  // larger than the cap still travels alone).
  bool never_exceed = false;
};

// A bucket: positions [begin, end) of the ready-order sequence.
struct BucketSpan {
  std::size_t begin = 0, end = 0;
  std::uint64_t bytes = 0;
};

// Assigns gradients, given in the order they become ready, to buckets by `rule`. With `cycle` (Horovod's
// background cycle: the tick at which each gradient is seen), a bucket also closes when the tick changes.
std::vector<BucketSpan> assign_buckets(std::span<const std::uint64_t> bytes_in_ready_order,
                                       const FusionRule& rule, std::span<const double> cycle = {});

}  // namespace cclab
