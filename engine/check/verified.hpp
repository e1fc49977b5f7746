// Verified-ness as a type. A VerifiedSchedule can only be made by verify_compact, so a backend that takes one
// never re-verifies. What is checked depends on the pass (docs/design.md, "Verified-ness is a type"):
// - ring and tree passes: O(C·P) preconditions: each ring is a permutation of the lane's members, each tree
//   spans them once from one root, every role range lies inside the buffer the lane places it in, the
//   places of a lane's input and output do not overlap except in the collective's in-place layout, and the
//   scratch a pass uses is declared. Their correctness at any size rests on the exhaustive verification of
//   their expansions in the planner matrix (tests/planner_matrix_test.cpp, tests/expansion_test.cpp).
// - NVLSTree passes: the same, with each channel's tree spanning the nodes (the expansion's switch groups are
//   the nodes by construction); their expansions are fully verified in tests/expansion_test.cpp.
// - SHARP passes: their GPUs, nodes and channels, countable rounds, and chains that are permutations; the
//   groups and partners agree by construction of the expansion (engine/check/preconditions.cpp).
// - NVLS passes: members, channels, countable rounds, and roles the switch can serve (reduce sources and
//   multicast destinations full-vector places, a multicast after a reduce sending what the reduce wrote);
//   every member runs the same rounds of each channel by construction. Their expansions are pinned by
//   tests/expansion_test.cpp and fully verified in the planner matrix.
// - explicit passes: the full verifier (engine/check/verifier.hpp) on the pass's own programs.
// - VerifyDepth::All (`--verify all`, the oracle): the whole schedule expanded and fully verified, within the
//   memory budget (common/memory.hpp) or refused up front.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/ir/compact.hpp"

namespace cclab {

enum class VerifyDepth { Patterns, All };

// nullopt when the schedule passes; else the first problem, naming the phase, lane and member.
std::optional<std::string> check_compact(const CompactSchedule& schedule,
                                         VerifyDepth depth = VerifyDepth::Patterns);

class VerifiedSchedule {
 public:
  const CompactSchedule& compact() const { return *schedule_; }
  const CompactSchedule* operator->() const { return schedule_.get(); }
  VerifyDepth depth() const { return depth_; }

 private:
  friend VerifiedSchedule verify_compact(CompactSchedule schedule, VerifyDepth depth);
  VerifiedSchedule(std::shared_ptr<const CompactSchedule> s, VerifyDepth depth)
      : schedule_(std::move(s)), depth_(depth) {}
  std::shared_ptr<const CompactSchedule> schedule_;
  VerifyDepth depth_;
};

// Checks and wraps; PlanError with check_compact's message when the schedule fails.
VerifiedSchedule verify_compact(CompactSchedule schedule, VerifyDepth depth = VerifyDepth::Patterns);

}  // namespace cclab
