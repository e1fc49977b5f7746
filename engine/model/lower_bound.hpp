// Lower bounds of the α-β model's time (engine/model/cost.hpp) that route nothing. `auto` costs its
// candidates in the order of their bounds and skips one whose bound is no better than the cheapest time
// already costed: it cannot win, so the choice is the same as costing everything (tests/formulas_test.cpp
// checks that and that every bound stays below its α-β time, across presets, sizes and protocols). At 16,384
// GPUs that saves routing and walking the losers.
//
// What a message can cost at least, without its route: a message between GPUs of one node crosses at least
// one link; between nodes, where only network links (InfiniBand, Ethernet) join a node to anything outside
// it, at least one network link. So its latency is at least the least effective latency of such a link and,
// under NCCL's protocols, the step latency of the least route class it can have (NVLink inside a node,
// network between nodes); its bandwidth at most the largest effective bandwidth of such a link, times the
// protocol's wire efficiency.
#pragma once

#include <vector>

#include "engine/ir/compact.hpp"
#include "engine/model/cost.hpp"
#include "topology/topology.hpp"

namespace cclab {

class MessageBounds {
 public:
  MessageBounds(const topo::Topology& topology, const CostParams& params);

  // The protocols a bound is the least over: those params.protocol stands for, LL128 included.
  const std::vector<Protocol>& protocols() const { return protocols_; }
  const CostParams& params() const { return params_; }
  const topo::Topology& topology() const { return topology_; }
  // The largest effective bandwidth of any link (what no transfer inside a node beats).
  double fastest_link_Bps() const { return intra_.bandwidth_Bps; }
  // No message of `bytes` from rank a to rank b costs less under `protocol` (concrete).
  double message_s(int a, int b, double bytes, Protocol protocol) const;

 private:
  struct Reach {
    double latency_s = 0, bandwidth_Bps = 0;
  };
  const topo::Topology& topology_;
  CostParams params_;
  std::vector<Protocol> protocols_;
  Reach intra_, inter_;
  bool network_between_nodes_ = true;  // only network links join a node's vertices to anything outside it
};

// The least α-β time of a compact schedule, over the protocols: per rank a lower bound on when it is ready,
// from the launch on, raised phase by phase: every member of a lane ends no earlier than its lane's earliest
// ready member plus the lane's bound. A ring pass's bound per channel is the larger of (a) the chain of hops
// the last block a member receives has travelled (reduce-scatter and allgather: all hops twice but two, each
// at least one message of the smallest chunk) and (b) a member's connection carrying all its bytes; tree and
// explicit passes bound 0 (trees are costed first: their bound is the smallest).
double compact_lower_bound_s(const CompactSchedule& schedule, const MessageBounds& bounds);

// Halving-doubling allreduce without planning it (engine/plan/halving_doubling_allreduce.hpp): its 2·log2 P'
// exchanges depend on each other, each no cheaper than the cheapest message of its step over all pairs.
double halving_doubling_lower_bound_s(const CollectiveSpec& spec, const MessageBounds& bounds);

// NVLSTree allreduce without planning it (engine/plan/nvls_tree_allreduce.hpp): NVLS's launch, then every
// GPU's NVSwitch port carries S(1 + 1/g) each way (g GPUs per node), no faster than the fastest link.
double nvls_tree_lower_bound_s(const CollectiveSpec& spec, const MessageBounds& bounds);
// CollNet allreduce without its plan: one SHARP trip, then the larger of what a GPU sends inside its node
// (2(g−1)/g·S) and up to the network (S/g), through the fastest link.
double collnet_lower_bound_s(const CollectiveSpec& spec, const MessageBounds& bounds);

}  // namespace cclab
