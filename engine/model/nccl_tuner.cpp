#include "engine/model/nccl_tuner.hpp"

#include <algorithm>
#include <bit>

#include "common/error.hpp"

namespace cclab {

double nccl_tuner_tree_allreduce_s(Protocol protocol, const NcclTreeEstimate& in) {
  CCLAB_ENFORCE(protocol == Protocol::LL || protocol == Protocol::LL128 || protocol == Protocol::Simple,
                "NCCL's tuner estimate needs a concrete NCCL protocol");
  CCLAB_ENFORCE(in.ranks >= 1 && in.nodes >= 1 && in.channels >= 1 && in.graph_bus_Bps > 0,
                "NCCL's tuner estimate needs ranks, nodes, channels and a graph bandwidth");
  const ProtocolConstants& k = protocol_constants(protocol, AlgorithmFamily::Tree);
  const double intra_s = k.step_latency_s[in.pcie_inside ? 1 : 0];
  const double inter_s = k.step_latency_s[2];
  // log2i: the depth of a binary tree over the nodes (NCCL rounds it down).
  const int levels = std::bit_width(static_cast<unsigned>(in.nodes)) - 1;
  const double latency_s = k.launch_s + 2 * ((in.ranks / in.nodes - 1) * intra_s + levels * inter_s);

  const auto capped = [&](Protocol p, double bus_Bps) {
    return std::min(bus_Bps, in.channels * protocol_bandwidth_cap_Bps(p, AlgorithmFamily::Tree, in.arch,
                                                                      in.nodes, in.channels));
  };
  double bus_Bps = capped(Protocol::Simple, 0.92 * in.graph_bus_Bps);
  if (protocol == Protocol::LL) bus_Bps = capped(Protocol::LL, bus_Bps / 3.8);
  if (protocol == Protocol::LL128)
    bus_Bps = capped(Protocol::LL128, bus_Bps * (in.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0));
  const double algorithm_Bps = 0.5 * bus_Bps;
  return latency_s + in.bytes / algorithm_Bps;
}

}  // namespace cclab
