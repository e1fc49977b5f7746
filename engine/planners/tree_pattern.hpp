// The reduce step every tree planner shares: a rank receives its children's partial results for one chunk and
// sums them with its own input. The first child is received with RecvReduce straight into the sum; the others
// arrive concurrently into scratch slots and are added locally, so a rank with three children (a chain child
// and two tree children) waits one step, not three, as in NCCL where a tree step receives from all children
// at once.
#pragma once

#include <vector>

#include "engine/schedule.hpp"

namespace cclab::planners {

struct ChildSlots {
  std::uint64_t base = 0;    // scratch offset of the slot of the second child
  std::uint64_t stride = 0;  // elements between consecutive children's slots (the buffer's count)
};

// Returns the op after which `sum` holds input + all children (kNoOp when there are no children: sum
// untouched).
OpId emit_reduce_children(ProgramBuilder& b, const std::vector<int>& children, int channel,
                          const Chunk& input, const Chunk& sum, const ChildSlots& slots);

// Scratch elements emit_reduce_children needs for `children` children.
inline std::uint64_t child_slots_size(std::size_t children, std::uint64_t count) {
  return children > 1 ? (children - 1) * count : 0;
}

}  // namespace cclab::planners
