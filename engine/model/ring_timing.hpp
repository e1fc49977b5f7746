// The ring pass's recurrence (engine/model/compact_cost.hpp explains it).
#pragma once

#include <span>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/model/connections.hpp"
#include "engine/model/cost.hpp"

namespace cclab {

struct RingTimingModel {
  // nullptr: count steps (a transfer takes 1, local work 0, no connection order); else the α-β model.
  const ConnectionCosts* costs = nullptr;
  CostParams params;
  double elem_bytes = 4;
};

// End time of each member's last op of the pass (its ready time when it has none).
std::vector<double> time_ring_pass(const RingPass& pass, std::span<const int> global_rank,
                                   std::span<const double> ready_s, const RingTimingModel& model);

}  // namespace cclab
