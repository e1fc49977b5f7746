// The α-β model and the step count on the compact form, equal to the explicit walk (engine/model/cost.hpp) on
// every schedule (tests/compact_cost_test.cpp pins that to 1e-9 across the planner matrix).
// - Phases: a phase's ops on a rank start no earlier than the rank's previous phase ended (the barrier), so
//   each lane is timed on its own from its members' ready times; connections never carry traffic across
//   phases (a sender's previous transfer ended before its barrier), so a lane needs no state from before.
// - Ring passes: a recurrence over (step, chunk, position) per channel. At step s position i's send of chunk
//   k waits for its receive of that block at step s-1 (reduce-scatter) or s-1 of the allgather; the
//   allgather's receive of block i-s also waits for the reduce-scatter's send of it (the buffer is
//   overwritten), the one dependency that needs a table of P·(P-1)·K send times. O(C·P²·K) time, O(P²·K)
//   memory, no ops materialized: a 1,024-GPU ring with 8 channels, 33.5 M ops as an explicit walk, is
//   8.4 M recurrence cells.
// - Tree passes: the expansion's program order generated per member, timed by a worklist over members and
//   chunks (engine/model/tree_timing.cpp), O(C·P·K) time, O(P·K) memory.
// - Explicit passes: the lane's programs are walked (engine/model/walk.hpp).
// Link shares are those of the explicit walk: every connection of every lane is declared first.
#pragma once

#include "engine/ir/compact.hpp"
#include "engine/ir/run_result.hpp"
#include "engine/model/connections.hpp"
#include "engine/model/cost.hpp"

namespace cclab {

// total_s, rank_end_s and bytes_sent; no per-op times (those belong to the explicit form). The cheapest of
// estimate_compact_cost_by_protocol.
RunResult estimate_compact_cost(const CompactSchedule& schedule, const topo::Topology& topology,
                                const CostParams& params = {});
// The schedule under every protocol params.protocol stands for (protocols_to_cost order), routed once.
std::vector<ProtocolRun> estimate_compact_cost_by_protocol(const CompactSchedule& schedule,
                                                           const topo::Topology& topology,
                                                           const CostParams& params = {});
int count_compact_steps(const CompactSchedule& schedule);

// The pieces of estimate_compact_cost_by_protocol for a backend that prices the connections itself (the
// pattern-level simulator, sim/simulator.hpp):
// - every connection (from, to, IR channel, in global ranks) that the expansion of phase `phase` uses, each
//   once, in a fixed order, grouped into the flows that run side by side: a ring pass's connections are
//   busy together for its 2(P-1) steps; a tree pass's up connections (IR channels 2c) carry the reduction
//   and its down connections (2c+1) the broadcast, two groups, busy together only while a pipeline is full;
//   a CollNet Direct pass's scatter connections (even IR channels) and gather connections (odd) likewise.
//   Ring groups first, then up, down, scatter, gather; empty groups left out. Each flow also carries its
//   pipeline (one ring channel, one tree, or one pair of local ranks' channel, of one lane, numbered within
//   the phase): a pipeline's flows move its chunks at one rate, its slowest flow's.
struct RankConnection {
  int from = 0, to = 0, ir_channel = 0;
  auto operator<=>(const RankConnection&) const = default;
};
struct FlowGroup {
  std::vector<RankConnection> flows;
  std::vector<int> pipeline;  // per flow
  bool tree = false;
  // CollNet Direct's scatter or gather: a round's gather leaves after its scatter has arrived, so the two
  // meet on a GPU's port only while rounds overlap, where its bytes bound the whole (the busiest-link floor).
  bool alternating = false;
};
std::vector<FlowGroup> phase_flow_groups(const CompactSchedule& schedule, int phase);
// - declares every connection of the schedule in `costs` (then finish() it);
void declare_connections(const CompactSchedule& schedule, ConnectionCosts& costs);
// - the schedule timed on those connections under costs.protocol(), launch cost included: total_s and
//   rank_end_s (bytes_sent is compact_bytes_sent's, the same under any pricing).
RunResult time_compact(const CompactSchedule& schedule, const ConnectionCosts& costs,
                       const CostParams& params);

// What costing the schedule takes, counted in O(connections): the distinct rank pairs to route (each a
// shortest-path search over the topology), the ring and tree recurrences' cells, the ops of explicit lanes
// walked one by one. `cclab plan` skips the α-β figures when they would take long, and says why.
struct CostWork {
  std::uint64_t routes = 0;
  std::uint64_t ring_cells = 0;
  std::uint64_t tree_cells = 0;
  std::uint64_t walked_ops = 0;
  // About how long the work takes on one core, from per-item costs measured on the development machine (2
  // cores): about 20 µs per route on a 45,000-vertex fabric, 4 ns per ring recurrence cell, 0.3 µs per tree
  // cell of (member, chunk, channel) for the step count and three protocols, 0.2 µs per walked op.
  double estimated_s() const {
    return 2e-5 * static_cast<double>(routes) + 4e-9 * static_cast<double>(ring_cells) +
           3e-7 * static_cast<double>(tree_cells) + 2e-7 * static_cast<double>(walked_ops);
  }
};
CostWork estimate_cost_work(const CompactSchedule& schedule);

// Bytes each rank sends, from the passes (O(C·P) for ring and tree passes).
std::vector<std::uint64_t> compact_bytes_sent(const CompactSchedule& schedule);

}  // namespace cclab
