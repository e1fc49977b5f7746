// Recurrences that time ring and tree passes of the compact form without expanding them
// (engine/model/compact_cost.hpp explains their place). Each gives the same doubles as the explicit walk of
// the pass's expansion (engine/model/walk.hpp), to rounding: tests/compact_cost_test.cpp pins that.
#pragma once

#include <span>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/model/connections.hpp"
#include "engine/model/cost.hpp"

namespace cclab {

struct PassTimingModel {
  // nullptr: count steps (a transfer takes 1, local work 0, no connection order); else the α-β model.
  const ConnectionCosts* costs = nullptr;
  CostParams params;
  double elem_bytes = 4;
};

// End time of each member's last op of the pass (its ready time when it has none).
std::vector<double> time_ring_pass(const RingPass& pass, std::span<const int> global_rank,
                                   std::span<const double> ready_s, const PassTimingModel& model);
std::vector<double> time_tree_pass(const TreePass& pass, std::span<const int> global_rank,
                                   std::span<const double> ready_s, const PassTimingModel& model);

}  // namespace cclab
