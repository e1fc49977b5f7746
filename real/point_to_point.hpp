// Measuring point-to-point times for calibration: rank 0 ping-pongs every other rank over a Transport
// (MPI, or NCCL between GPUs), sizes from small to large, keeping the fastest of three repetitions (the
// machine is shared; interference only adds time). Used by `cclab calibrate` and by `cclab train
// --validate`, which calibrates before it predicts.
#pragma once

#include <memory>
#include <vector>

#include "real/calibration.hpp"
#include "real/transport.hpp"

namespace cclab::real {

class MpiWorld;

struct PointToPointSamples {
  std::vector<Sample> intra;  // peers on rank 0's node
  std::vector<Sample> inter;  // peers on other nodes
};

// Collective over the world: every rank calls it; rank 0 returns the samples (the others an empty set).
PointToPointSamples measure_point_to_point(const MpiWorld& world, Transport& transport,
                                           const std::vector<std::uint64_t>& sizes, int iters,
                                           double timeout_s);

// The calibrated topology of `world` from those samples (rank 0 only): α-β fits per intra/inter-node pair.
struct Calibration {
  LinearFit intra;
  std::optional<LinearFit> inter;
  std::shared_ptr<const topo::Topology> topology;  // shared: a Boost graph copies when moved
};
Calibration fit_calibration(const MpiWorld& world, const PointToPointSamples& samples);

}  // namespace cclab::real
