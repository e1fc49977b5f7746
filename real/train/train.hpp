// `cclab train`: data-parallel training of a LibTorch model whose gradients are allreduced by the engine's
// schedules over a real transport, with the checks that make its numbers trustworthy. Torch-free interface:
// only real/train/*.cpp include Torch.
//
// Per step (Horovod/DDP semantics): each rank takes its shard of the global batch (distributed sampler,
// reshuffled per epoch by seed), runs forward and backward; gradient hooks copy each gradient into its
// bucket as backward produces it (reverse registration order), and a full bucket is allreduced at once by
// the engine (sum, then / world size; optionally in fp16), in the order buckets fill; then clipping and an
// SGD step with the learning rate scaled by world size after a linear warm-up. Parameters start identical
// by an engine broadcast from rank 0. Communication runs on the training thread, between backward's
// kernels, so every second of it is exposed (there are no spare cores to overlap on here).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "engine/ir/schedule.hpp"
#include "topology/topology.hpp"

namespace cclab {
class Transport;
}

namespace cclab::real {

class MpiWorld;

struct TrainOptions {
  std::string model = "resnet-tiny";  // mlp | resnet-tiny
  int steps = 50;
  int batch = 16;  // per rank
  std::uint64_t seed = 1;
  int dataset = 8192;  // synthetic samples
  double lr = 0.01;    // per rank before scaling by the world size (0.05 diverges on the synthetic set)
  int warmup = 5;      // steps of linear warm-up
  double momentum = 0.9;
  double clip = 5.0;  // max gradient norm (0: off)
  std::string algo = "ring";
  std::string fusion = "ddp";  // ddp: buckets of `bucket` (first one `first_bucket`); horovod: one threshold
  std::uint64_t bucket_bytes = 1 << 20;
  std::uint64_t first_bucket_bytes = 256 << 10;
  bool fp16 = false;
  std::string transport = "mpi";
  std::string topology;  // for planning; empty: derived from the hosts
  double timeout_s = 60;
  // Checkpoints (rank 0): every N steps into dir, keeping the last `keep`; resume from a file or a dir.
  std::string checkpoint_dir;
  int checkpoint_every = 0;
  int keep = 3;
  std::string resume;
  // Outputs (rank 0).
  std::string csv;
  std::string timeline;
  std::string mlflow;
  // Validation.
  bool validate = false;
  int reference_steps = 10;  // steps the single-process reference retrains and compares
  std::string calibration;   // topology YAML from `cclab calibrate`; empty: calibrate in-process
  bool compare_gloo = false;
  bool quiet = false;  // no per-step lines
};

// The simulator (or α-β model) behind the prediction column: time of `schedule` on `topology` with the
// measured reduction throughput.
using PredictFn = std::function<double(const CompactSchedule&, const topo::Topology&, double reduce_Bps)>;

// Runs the training job on every rank of `world`, the engine's collectives over `transport` (MPI: CPU
// tensors; NCCL: CUDA tensors, which needs a CUDA-enabled LibTorch). Returns the exit status: 0, or 1 when a
// validation verdict failed. ConfigError for bad options or a refused checkpoint, BackendError for failed
// calls.
int run_training(const TrainOptions& options, MpiWorld& world, Transport& transport,
                 const PredictFn& predict);

}  // namespace cclab::real
