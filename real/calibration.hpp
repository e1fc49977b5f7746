// Point-to-point calibration: fit t(n) = α + n/β to measured one-way message times, and turn the fits into a
// topology whose routes have exactly those latencies and bandwidths, so that `cclab sim`, `predict` and
// `bench --predict` model this cluster as measured. Measuring is `cclab calibrate` (cli/cmd_calibrate.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace cclab::real {

struct Sample {
  std::uint64_t bytes = 0;
  double seconds = 0;  // one way
};

struct LinearFit {
  double alpha_s = 0;           // latency
  double beta_Bps = 0;          // bandwidth
  double rms_rel_residual = 0;  // of the samples, relative to the measured times
  double max_rel_residual = 0;
  std::size_t samples = 0;
};

// Weighted least squares with weights 1/t², i.e. minimizing relative error, so that 8-byte and 64-MiB
// messages both count (an unweighted fit lets the large messages decide α too). Needs ≥ 2 distinct sizes.
LinearFit fit_alpha_beta(const std::vector<Sample>& samples);

// `nodes` nodes of `ranks_per_node` ranks: per node a switch every rank hangs off (pcie links), and, with
// several nodes, one NIC per node on one fabric switch (ethernet links). Link models are neutral (efficiency
// 1, no overhead), latencies split so that a route between two ranks on one node adds up to intra.alpha and
// one between nodes to inter.alpha; bandwidths are the fitted β.
topo::Topology calibrated_topology(int nodes, int ranks_per_node, const LinearFit& intra,
                                   const std::optional<LinearFit>& inter);

}  // namespace cclab::real
