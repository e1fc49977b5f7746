// Building schedules out of sub-schedules planned on subgroups: the mechanism behind hierarchical algorithms.
// A sub-schedule is planned for a world of its own (ranks 0..g-1, its own input/output/scratch); appending it
// maps its ranks to global ranks, its buffers to places in the global buffers, and its ops into the global
// programs. Phases run one after the other on each rank: the first ops of a new phase wait for every op of
// the previous phase on that rank that nothing else waits for (its sinks), which orders the whole previous
// phase before it.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "engine/schedule.hpp"

namespace cclab {

struct Placement {
  Buffer buffer = Buffer::Output;
  std::uint64_t offset = 0;
};
// Where sub-rank j's buffer `b` lives in global rank ranks[j]'s buffers. Scratch is placed by the composer.
using PlaceFn = std::function<Placement(int sub_rank, Buffer b)>;

class Composer {
 public:
  explicit Composer(Schedule& target);

  // Starts a new phase: later appends wait for the phase before.
  void next_phase();
  // Appends `sub` (planned for ranks.size() ranks) onto the global ranks `ranks`.
  void append(const Schedule& sub, std::span<const int> ranks, const PlaceFn& place);

 private:
  Schedule& target_;
  std::vector<std::size_t> phase_begin_;    // per rank: first op of the current phase
  std::vector<std::vector<OpId>> barrier_;  // per rank: sinks of the previous phase
};

}  // namespace cclab
