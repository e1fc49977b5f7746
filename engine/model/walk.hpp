// Times of an explicit schedule's ops by a walk of the IR's semantics (engine/ir/progress.hpp): the α-β model
// (engine/model/cost.hpp has its rules) or unit steps. The schedule may be one lane of a compact schedule:
// its ranks are the lane's members, `global_rank` maps them to the ranks whose connections they use, and
// `ready_s` says when each member's previous phase ended (every op starts no earlier: the phase barrier).
#pragma once

#include <span>

#include "engine/ir/run_result.hpp"
#include "engine/ir/schedule.hpp"
#include "engine/model/connections.hpp"
#include "engine/model/cost.hpp"

namespace cclab {

struct WalkFrame {
  std::span<const int> global_rank;  // empty: member r is rank r
  std::span<const double> ready_s;   // empty: all 0
};

// Declares the connections of the schedule's sends and the switch ports of its switch ops.
void add_connections(const Schedule& schedule, ConnectionCosts& costs, const WalkFrame& frame = {});
// Declares the switch ports alone: per member and IR channel, the bytes its switch ops move up to the switch
// and down (a SwitchReduce sends the member's copy of every member's chunk up and takes its own result down;
// a SwitchStore sends its chunk up and takes every member's down).
void add_switch_ports(const Schedule& schedule, ConnectionCosts& costs, const WalkFrame& frame = {});

RunResult walk_alpha_beta(const Schedule& schedule, const ConnectionCosts& costs, const CostParams& params,
                          const WalkFrame& frame = {});
// Communication steps: each transfer 1, local ops 0; start rules as in the α-β walk, no connection order.
RunResult walk_steps(const Schedule& schedule, const WalkFrame& frame = {});

}  // namespace cclab
