// Measuring point-to-point times for calibration: rank 0 ping-pongs every other rank over a Transport
// (MPI, or NCCL between GPUs), sizes from small to large, keeping the fastest of three repetitions (the
// machine is shared; interference only adds time). Used by `cclab calibrate` and by `cclab train
// --validate`, which calibrates before it predicts.
#pragma once

#include <memory>
#include <vector>

#include "engine/exec/transport.hpp"
#include "real/calibration.hpp"

namespace cclab::real {

class MpiWorld;

struct PointToPointSamples {
  std::vector<Sample> intra;  // peers on rank 0's node
  std::vector<Sample> inter;  // peers on other nodes
};

// Collective over the world: every rank calls it; rank 0 returns the samples (the others an empty set).
// Isolated (default): rank 0 with each other rank in turn, the rest idle — the links' own α and β.
// All ranks at once: every rank sends to its neighbour and receives from the other one at the same time (a
// ring step; between nodes, to the same local rank of the next node), the slowest rank's step timed — the α
// and β a collective sees when every rank moves data and ranks share cores or memory bandwidth. (A ping-pong
// in pairs keeps half the ranks waiting: with 4 ranks on 2 cores it measured no sharing at all.)
enum class Load { Isolated, AllRanksAtOnce };
PointToPointSamples measure_point_to_point(const MpiWorld& world, Transport& transport,
                                           const std::vector<std::uint64_t>& sizes, int iters,
                                           double timeout_s, Load load = Load::Isolated);

// Bytes of result per second of a CPU reduction (f32 sum, 4 MiB operands) that a rank gets during a
// collective: a core's rate, measured while every rank does the same (the fastest of five, each shorter than
// a scheduler time slice, so a core's own), times local_cores / local_size where the node's ranks outnumber
// its cores (time-sharing gives each that share). The reduction rate predictions of CPU ranks use.
// Collective: every rank calls it and gets its own rate.
double measure_reduce_throughput(const MpiWorld& world);

// The calibrated topology of `world` from those samples (rank 0 only): α-β fits per intra/inter-node pair.
struct Calibration {
  LinearFit intra;
  std::optional<LinearFit> inter;
  std::shared_ptr<const topo::Topology> topology;  // shared: a Boost graph copies when moved
};
Calibration fit_calibration(const MpiWorld& world, const PointToPointSamples& samples);

}  // namespace cclab::real
