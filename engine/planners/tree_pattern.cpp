#include "engine/planners/tree_pattern.hpp"

namespace cclab::planners {

OpId emit_reduce_children(ProgramBuilder& b, const std::vector<int>& children, int channel,
                          const Chunk& input, const Chunk& sum, const ChildSlots& slots) {
  if (children.empty()) return kNoOp;
  // All receives first: ops of a channel start in program order, so a local add placed between two receives
  // would hold the second one back until the first had arrived.
  OpId reduced = b.recv_reduce(children[0], channel, input, sum);
  std::vector<OpId> got;
  auto slot = [&](std::size_t j) {
    return Chunk{Buffer::Scratch, slots.base + (j - 1) * slots.stride + sum.offset, sum.count};
  };
  for (std::size_t j = 1; j < children.size(); ++j)
    got.push_back(b.recv(children[j], channel, slot(j)));
  for (std::size_t j = 1; j < children.size(); ++j)
    reduced = b.local_reduce(slot(j), sum, {reduced, got[j - 1]}, channel);
  return reduced;
}

}  // namespace cclab::planners
