// Runs a verified schedule in a SimGrid network model: each matched send/receive is one SimGrid Comm between
// the ranks' hosts (payload = chunk bytes), each reduction one Exec (the host's speed is the reduction
// throughput), started when the IR's rules allow:
//   - an op starts after its deps complete and its channel predecessor starts;
//   - a transfer starts when both of its ops have started and the previous transfer of its (src, dst,
//   channel)
//     connection has completed (messages of a connection are in order, as in the α-β model);
//   - a recv_reduce completes when its reduction (after the transfer) does.
// Concurrent transfers share links by SimGrid's max-min fairness, which is what the α-β model cannot see.
//
// Network model: CM02 (max-min sharing, no TCP corrections), cross-traffic off, TCP window off. SimGrid's
// default LV08 multiplies latency by 13.01 and bandwidth by 0.97 to mimic TCP slow start and headers; NVLink
// and RDMA have neither, and protocol efficiency and per-message costs live in the topology's link models
// and in SimParams::protocol instead, so the simulator and the α-β model see the same links and messages.
//
// SimGrid keeps global state per process, so every simulation runs in a forked child process that sends its
// result back through a pipe; the caller's process never initialises SimGrid.
#pragma once

#include <string>

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
};

// Simulates one schedule from time 0. The schedule must have passed the verifier. Throws BackendError when
// SimGrid fails.
RunResult simulate(const Schedule& schedule, const topo::Topology& topology, const SimParams& params = {});

}  // namespace cclab::sim
