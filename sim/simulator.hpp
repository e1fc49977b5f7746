// Runs a verified schedule in a SimGrid network model: each matched send/receive is one SimGrid Comm between
// the ranks' hosts (payload = chunk bytes), each reduction one Exec (the host's speed is the reduction
// throughput), started when the IR's rules allow:
//   - an op starts after its deps complete and its channel predecessor starts;
//   - a transfer starts when both of its ops have started and the previous transfer of its (src, dst,
//     channel) connection has been delivered (Raw), or under NCCL's protocols once its sender has started,
//     with up to NCCL_STEPS messages of the connection in flight; a connection puts one message on the wire
//     at a time, in order (one flow, as in the α-β model), and each travels its route latency after;
//   - a recv_reduce completes when its reduction (after the transfer) does.
// Concurrent transfers share links by SimGrid's max-min fairness, which is what the α-β model cannot see.
//
// Network model: CM02 (max-min sharing, no TCP corrections), cross-traffic off, TCP window off, every flow
// weighing the same: the platform's links carry no latency (CM02 would weigh a flow by the inverse of its
// route latency, as TCP shares by RTT) and each message waits its route's latency before its bytes enter the
// network (sim/platform.hpp). SimGrid's default LV08 multiplies latency by 13.01 and bandwidth by 0.97 to
// mimic TCP slow start and headers; NVLink and RDMA have neither, and protocol efficiency and per-message
// costs live in the topology's link models and in SimParams::protocol instead, so the simulator and the α-β
// model see the same links and messages.
//
// Pattern-level mode (simulate_compact with by_pattern, `--fast`): a ring pass repeats one concurrent flow
// pattern for all of its steps, and the lanes of a phase run side by side. SimGrid solves the max-min sharing
// of each phase's flows (its connections, all busy at once) once, memoized by pattern, and the compact
// recurrence of the α-β model (engine/model/compact_cost.hpp) advances the schedule with those rates instead
// of its even split of each link among channels: the time and memory of the α-β model plus one SimGrid solve
// per distinct pattern, where the op-level simulation re-solves the sharing at every completion. It sees what
// the even split misses (lanes of one channel sharing a spine link: hierarchical's rails on an
// oversubscribed leaf-spine). Faults need no invalidation: a failed or degraded link is part of the platform
// the patterns are solved on; a straggler only delays ready times.
// Ring and tree passes go by pattern. A tree pass's up flows (the reduction) and down flows (the broadcast)
// are solved as two patterns: they run together only while a pipeline is full, so neither all-at-once nor
// apart is their sharing in general; but where the phase's flows, each tree pipeline at its slowest flow's
// rate, fit every link, solving them together gives the same rates as apart, and the two solves stand. Where
// they do not fit (up and down flows contending on a saturated link, e.g. four PCIe GPUs behind one NIC, or
// a neighbour's streams on a tree's links), the schedule is simulated op by op. Explicit passes
// (halving-doubling, chains, loaded JSON) change flows every step and run op by op. NVLS+SHARP passes
// (nvls_sharp) go by pattern where no other flow crosses their switch ports: their switch flows then have
// the ports' even shares, as in the α-β model (run_patterns: require_lone_switch_ports).
// A connection's messages are paced at its solved rate (no more than its even share, as op by op), and each
// moves on the wire at what its links leave beyond the other flows' average load (every pipeline at its
// slowest flow's rate): where a ring's NICs set the pace, its NVSwitch hops are off the wire part of each
// step, and op by op their messages move at their thread block's speed, not at a share of a port that all
// channels fill only together (docs/simulation.md, "Pattern-level mode").
//
// SimGrid keeps global state per process, so every simulation runs in a forked child process that sends its
// result back through a pipe; the caller's process never initialises SimGrid.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/ir/run_result.hpp"
#include "engine/ir/schedule.hpp"
#include "engine/model/cost.hpp"
#include "topology/topology.hpp"

namespace cclab::sim {

struct SimParams {
  CostParams compute;  // reduction and copy throughput (the hosts' speed)
  // A concrete protocol (not Auto), priced as the α-β model prices it (engine/model/protocol.hpp): the
  // payload on the wire is bytes / efficiency, each route ends in a private latency-only link of max(0, step
  // latency − route latency) (it holds no bandwidth), everything starts after the launch cost, and under
  // LL/LL128/Simple a message leaves when its sender is ready (receivers have buffers posted ahead) and its
  // receive completes when it has arrived and the receiver has reached the op. Raw: the route alone,
  // store-and-forward per connection.
  Protocol protocol = Protocol::Raw;
  std::string platform_xml_path;  // when set, the platform is also written there as SimGrid XML
  // The written platform routes every ordered pair of ranks, not only those the schedule uses: what an SMPI
  // run of another implementation of the collective needs (bench/smpi_vs_sim.sh).
  bool platform_all_pairs = false;
  // simulate_compact: solve each phase's flow pattern once instead of running op by op (the reference, and
  // what per-op times need). `predict` and `regress` set it (step times agree within 0.16 % on the shipped
  // scenarios, docs/simulation.md); `cclab sim` only with --fast: op by op is the collective-level
  // reference.
  bool by_pattern = false;
};

// Simulates one schedule from time 0. The schedule must have passed the verifier. Throws BackendError when
// SimGrid fails.
RunResult simulate(const Schedule& schedule, const topo::Topology& topology, const SimParams& params = {});
// Simulates a checked compact schedule op by op, or by pattern (no per-op times) when params.by_pattern is
// set, no platform file is asked for, the schedule has no explicit passes and its tree lanes fit (above).
// `ran_by_pattern`, when given, says which way it ran.
RunResult simulate_compact(const CompactSchedule& schedule, const topo::Topology& topology,
                           const SimParams& params = {}, bool* ran_by_pattern = nullptr);
// One simulation of a batch: a checked compact schedule, its topology (both outlive the call) and how.
struct BatchJob {
  const CompactSchedule* schedule = nullptr;
  const topo::Topology* topology = nullptr;
  SimParams params;  // no platform file
};
// What became of one: its result, or why it failed.
struct BatchOutcome {
  std::optional<RunResult> result;
  std::string error;
  bool by_pattern = false;  // simulated by pattern (false: op by op, asked to or because its lanes contend)
};
// Simulates each job as simulate_compact would, each in its own SimGrid process, up to `parallel` processes
// at once; outcomes in the jobs' order, the same as one at a time. `finished(i)`, when given, is called in
// the caller's process as job i ends (for progress). A job whose topology cannot hold its schedule throws
// ConfigError before anything runs.
using BatchProgress = std::function<void(std::size_t job)>;
std::vector<BatchOutcome> simulate_compact_batch(const std::vector<BatchJob>& jobs, int parallel,
                                                 const BatchProgress& finished = {});
// Whether simulate_compact tries `schedule` by pattern under `params`: asked to (by_pattern), no platform
// file to write, and ring, tree, SHARP (CollNet Direct and Chain, NVLS+SHARP) and NVLS passes only. A
// schedule whose tree lanes contend (a CollNet chain's up and down on its middle GPUs' ports), whose Direct
// or tree flows cross a neighbour's streams, or whose SHARP or NVLS ports carry other flows too, still runs
// op by op (BatchOutcome::by_pattern says which way a batch's jobs ran).
inline bool simulates_by_pattern(const CompactSchedule& schedule, const SimParams& params) {
  if (!params.by_pattern || !params.platform_xml_path.empty()) return false;
  for (const Phase& phase : schedule.phases()) {
    for (const Lane& lane : phase.lanes) {
      const bool by_pattern = std::visit(
          PassHandlers{[](const RingPass&) { return true; }, [](const TreePass&) { return true; },
                       [](const SharpPass&) { return true; }, [](const NvlsPass&) { return true; },
                       [](const NvlsTreePass&) { return false; }, [](const ExplicitPass&) { return false; }},
          *lane.pass);
      if (!by_pattern) return false;
    }
  }
  return true;
}

}  // namespace cclab::sim
