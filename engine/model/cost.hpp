// The α-β-γ cost of a schedule on a topology: the contention-free critical path through the schedule's ops.
// - A transfer a -> b starts when both sides have started and the (a, b, channel) connection has delivered
// its
//   previous message (messages of a connection are store-and-forward, in order, which gives the textbook
//   pipeline (P-1+K-1)·(α + S/(K·B)) for K chunks; under NCCL's protocols a message does not wait for the
//   receiver nor for the previous one's arrival, see is_pipelined in engine/model/protocol.hpp); it takes α +
//   n/B, where α is the route's effective latency (hop latencies plus the link kinds' per-message overheads)
//   and B is the route's bottleneck bandwidth, each link split evenly among the channels whose connections
//   cross it (channels run concurrently; the phases of one channel do not). This static share stands in for
//   the contention the SimGrid backend models properly.
// - A RecvReduce adds n/γ (reduction throughput); a Copy or LocalReduce takes n/γ.
// - Op start times follow the IR: after deps complete and after the channel predecessor starts.
// With one channel and one chunk on a uniform single-switch topology, ring allreduce costs exactly
// 2(P-1)·(α + S/(P·B)) (+ the γ term); tests pin that down.
#pragma once

#include "engine/ir/run_result.hpp"
#include "engine/ir/schedule.hpp"
#include "engine/model/protocol.hpp"
#include "topology/topology.hpp"

namespace cclab {

class ConnectionCosts;  // engine/model/connections.hpp

struct CostParams {
  // Reduction throughput per GPU in bytes of result per second, shared by the collective's channels
  // (per_channel_rates below). Default: about a third of A100 HBM2e bandwidth (1.6 TB/s), since a reduction
  // reads two operands and writes one. 0 makes reductions free.
  double reduce_Bps = 5e11;
  double copy_Bps = 8e11;  // device-local copy (read + write of HBM)
  // Ring passes whose blocks differ in size (the count does not divide by the members) are timed exactly up
  // to this many recurrence cells (channels x members x steps x chunks; 2^25 is a 1,024-GPU ring with 8
  // channels); past it, with every block at its channel's mean size (engine/model/pass_timing.hpp).
  std::uint64_t ring_exact_cells = std::uint64_t{1} << 25;
  // What a message costs beyond its route (engine/model/protocol.hpp): Raw is the route alone; LL, LL128 and
  // Simple add NCCL's step latencies, wire efficiency and launch cost; Auto costs each NCCL protocol that
  // applies and keeps the cheapest, as NCCL's tuner does per collective.
  Protocol protocol = Protocol::Raw;
  // The protocols Auto may choose among, as bits (protocol_bit): all three, or what a run allowed (NCCL_PROTO
  // as a list or with '^', an NCCL before LL128 came in 2.5). Where none of them applies, Simple.
  unsigned auto_protocols = kAllNcclProtocolBits;
  // Ranks that are CPU processes, one core each (cclab's MPI transport on hosts): the transport copies a
  // message into the receiver's buffer on the receiving core, inside its MPI calls, so a rank's receives and
  // its reductions and copies run one after the other, in its walk order, not side by side as a GPU's copy
  // engines and SMs do. Timed by the explicit walk (compact schedules are expanded for it; CPU worlds are
  // small); a message then waits for the receiver as under Raw.
  bool one_core_per_rank = false;
};

// A GPU runs a collective's channels side by side (NCCL: a thread block each, all in one kernel) and they
// share its memory bandwidth, so each channel's reductions and copies go at the GPU's rates divided by the
// channels. The op-level simulation shares a GPU's host among the reductions running on it at each instant;
// in the recurrences the channels of a pass run in lock-step, so all of them reduce at once. Ranks that are
// one CPU core each do one thing at a time already (one_core_per_rank) and keep the whole rate.
inline CostParams per_channel_rates(CostParams params, int channels) {
  if (params.one_core_per_rank || channels <= 1) return params;
  params.reduce_Bps /= channels;
  params.copy_Bps /= channels;
  return params;
}

// What ranks on CPU cores cost (MPI ranks, `train --validate` and `bench --predict` on them): one core per
// rank, reductions at the rate measured on the machine (bytes of result per second), copies at twice it (a
// copy reads one operand where a reduction reads two: the a+b loop and copy loop of docs/design.md, "Rules
// every part keeps", 14 and 21 GB/s here, are close to that ratio).
inline CostParams cpu_rank_costs(double reduce_Bps) {
  CostParams cost;
  cost.reduce_Bps = reduce_Bps;
  cost.copy_Bps = 2 * reduce_Bps;
  cost.one_core_per_rank = true;
  return cost;
}

// One α-β run of a schedule under one concrete protocol.
struct ProtocolRun {
  Protocol protocol = Protocol::Raw;
  RunResult run;
};
// The protocols `requested` stands for on connections that do (not) run over PCIe only: itself, or with Auto
// those of LL, LL128 (where NCCL enables it) and Simple that `allowed` has and the family runs (Simple where
// none is): Simple alone for Nvls, Pat and CollNet, no LL128 for P2p.
std::vector<Protocol> protocols_to_cost(Protocol requested, bool crosses_pcie,
                                        AlgorithmFamily family = AlgorithmFamily::Ring,
                                        unsigned allowed = kAllNcclProtocolBits);
// The protocols to cost a schedule over `costs` (finished) under: protocols_to_cost, except that where
// params.protocol is Auto a point-to-point schedule (AlgorithmFamily::P2p) gets the one protocol NCCL's rule
// gives its largest transfer (nccl_p2p_protocol; the other of LL and Simple where params.auto_protocols
// leaves that one out), since NCCL picks a transfer's protocol by its size and not by a cost model. The
// hypercube's steps double in size, so NCCL may run its first ones under LL and its last under Simple; one
// protocol per schedule takes the largest step's.
std::vector<Protocol> protocols_for(const ConnectionCosts& costs, const CostParams& params);
// The cheapest of the runs (the first on a tie, so NCCL's order decides).
ProtocolRun cheapest(std::vector<ProtocolRun> runs);

// The schedule under every protocol params.protocol stands for, in protocols_to_cost order.
std::vector<ProtocolRun> estimate_cost_by_protocol(const Schedule& schedule, const topo::Topology& topology,
                                                   const CostParams& params = {});

// The cheapest of estimate_cost_by_protocol.
RunResult estimate_cost(const Schedule& schedule, const topo::Topology& topology,
                        const CostParams& params = {});

// Communication steps: the longest chain of transfers that depend on each other (each transfer counts 1,
// local ops 0). Ring allreduce with one chunk: 2(P-1).
int count_steps(const Schedule& schedule);

}  // namespace cclab
