// The training loop's private header: the Trainer class and what its parts share. Only the Torch translation
// units of real/train/ include it: loop.cpp (model, steps, parameters, checkpoints), buckets.cpp (gradient
// buckets and their allreduce through the engine), validation.cpp (lockstep and reference checks, prediction
// vs measurement, the Gloo comparison) and reports.cpp (CSV, MLflow, timeline). The public entry point is
// real/train/train.hpp.
#pragma once

#include <mpi.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/check/verified.hpp"
#include "engine/check/verifier.hpp"
#include "engine/exec/executor.hpp"
#include "engine/exec/reduce_kernels.hpp"
#include "engine/ir/trace.hpp"
#include "engine/plan/selection.hpp"
#include "engine/whatif/fusion.hpp"
#include "real/mpi/point_to_point.hpp"
#include "real/mpi/transport.hpp"
#include "real/train/checkpoint.hpp"
#include "real/train/mlflow.hpp"
#include "real/train/models.hpp"
#include "real/train/train.hpp"
#include "topology/presets.hpp"
#if CCLAB_HAVE_GLOO
#include "real/gloo/collectives.hpp"
#endif

namespace cclab::real {

using Clock = std::chrono::steady_clock;
using train::Dataset;

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// FNV-1a over the parameters' bytes: equal hashes on all ranks = bitwise-identical replicas.
inline std::uint64_t hash_parameters(const std::vector<torch::Tensor>& params) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const torch::Tensor& p : params) {
    const torch::Tensor c = p.detach().to(torch::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
    for (std::int64_t i = 0; i < c.numel() * static_cast<std::int64_t>(c.element_size()); ++i) {
      h ^= bytes[i];
      h *= 1099511628211ULL;
    }
  }
  return h;
}

// Where the next global batch starts: an epoch and an offset into that epoch's permutation.
struct SamplerPosition {
  int epoch = 0;
  std::int64_t offset = 0;
};

// The distributed sampler: per epoch a permutation seeded by (seed, epoch); a step takes the next P x B
// positions of it, rank r those at r, r + P, r + 2P, ... (torch's DistributedSampler, drop_last: an epoch
// ends when fewer than P x B positions remain). Positions follow from an origin — the start, or where a
// checkpoint left off — so that a resume with another number of ranks re-shards the rest of the epoch
// (elastic).
class Sampler {
 public:
  Sampler(int samples, int world, int batch, std::uint64_t seed, int origin_step = 0,
          SamplerPosition origin = {})
      : samples_(samples),
        world_(world),
        batch_(batch),
        seed_(seed),
        origin_step_(origin_step),
        origin_(origin) {
    if (samples / (world * batch) < 1) {
      throw ConfigError(fmt::format("--dataset {} is smaller than one global batch ({} ranks x --batch {})",
                                    samples, world, batch));
    }
  }
  // The position step `step` (0-based, >= the origin's) starts at.
  SamplerPosition position(int step) const {
    const std::int64_t global = static_cast<std::int64_t>(world_) * batch_;
    const std::int64_t per_epoch = samples_ / global;
    const std::int64_t k = step - origin_step_;
    const std::int64_t left_in_origin_epoch = (samples_ - origin_.offset) / global;
    if (k < left_in_origin_epoch) return {origin_.epoch, origin_.offset + k * global};
    const std::int64_t after = k - left_in_origin_epoch;
    return {origin_.epoch + 1 + static_cast<int>(after / per_epoch), (after % per_epoch) * global};
  }
  int epoch_of(int step) const { return position(step).epoch; }
  torch::Tensor indices(int step, int rank) {
    const SamplerPosition at = position(step);
    if (at.epoch != cached_epoch_) {
      auto gen = at::detail::createCPUGenerator(seed_ * 1000003ULL + static_cast<std::uint64_t>(at.epoch));
      permutation_ = torch::randperm(samples_, gen, torch::kLong);
      cached_epoch_ = at.epoch;
    }
    const std::int64_t first = at.offset + rank;
    return permutation_.slice(0, first, at.offset + static_cast<std::int64_t>(batch_) * world_, world_);
  }

 private:
  int samples_, world_, batch_;
  std::uint64_t seed_;
  int origin_step_;
  SamplerPosition origin_;
  int cached_epoch_ = -1;
  torch::Tensor permutation_;
};

// How the gradients of one bucket are allreduced in place (sum): the engine, or Gloo for the comparison.
using AllreduceFn = std::function<void(const CollectiveSpec&, void* data)>;

struct Bucket {
  std::vector<int> params;            // indices into the parameter list, in gradient-ready order
  std::vector<std::int64_t> offsets;  // element offset of each in `flat`
  std::int64_t count = 0;
  torch::Tensor flat, half;  // f32 gradients; their f16 copy under --fp16
  int arrived = 0;
  std::optional<CompactSchedule> plan;  // the engine's plan, made and checked once
  std::optional<Schedule> schedule;     // this rank's row of it: a rank never expands the others
  std::vector<double> seconds;          // measured allreduce time per step (rank 0)
};

struct StepRecord {
  int step = 0, epoch = 0;
  double loss = 0, accuracy = 0, lr = 0;
  double step_s = 0, compute_s = 0, comm_s = 0;
  bool identical = true;
};
class Trainer {
 public:
  Trainer(const TrainOptions& o, MpiWorld& world, Transport& transport, const PredictFn& predict);

  int run();

 private:
  template <typename... Args>
  void print0(fmt::format_string<Args...> format, Args&&... args) {
    if (rank_ == 0) {
      fmt::print(format, std::forward<Args>(args)...);
      std::fflush(stdout);
    }
  }

  // The NCCL transport works on its own streams: torch's queued kernels (the bucket copies, the broadcast
  // buffer) must have finished before it reads the memory. Its results are complete when run_rank returns.
  void sync_device() const {
    if (device_.is_cuda()) torch::cuda::synchronize(device_.index());
  }

  std::int64_t parameter_count() const {
    std::int64_t n = 0;
    for (const auto& p : params_)
      n += p.numel();
    return n;
  }

  // --- Model, optimizer, buckets, hooks. ---

  void build_model(bool hooks);

  // Gradients become ready in reverse registration order; they are fused by the rule the step model predicts
  // with (engine/whatif/fusion.hpp): DDP fills a small first bucket, then full ones; Horovod one threshold.
  void make_buckets();

  void on_gradient(int param, const torch::Tensor& grad);

  // Allreduces one full bucket (sum), then averages; times it for the step record and the timeline.
  void sync_bucket(Bucket& b);

  void engine_allreduce(const CollectiveSpec& spec, void* data);

  // --- The loop. ---

  double lr_at(int step) const;

  void set_lr(torch::optim::SGD& optimizer, double lr);

  std::pair<torch::Tensor, torch::Tensor> batch(int step, int rank);

  // Trains steps [first, last); returns each step's wall time.
  std::vector<double> train_steps(int first, int last, const AllreduceFn& allreduce, bool record,
                                  train::MlflowRun* mlflow);

  // SGD's momentum buffer of each parameter (undefined before the first step).
  std::vector<torch::Tensor> momentum_buffers();

  // One step of a single process on the whole global batch, from the same parameters and momentum the
  // distributed step started from, against the distributed step's result: the relative L2 difference of the
  // parameters. This isolates what the collectives contribute; a free-running comparison over many steps
  // also measures how training dynamics amplify rounding (reported separately).
  double reference_step_error(int step, const std::vector<torch::Tensor>& before,
                              const std::vector<torch::Tensor>& momentum);

  bool replicas_identical();

  // --- Parameters as one flat tensor: broadcast, snapshots. ---

  std::vector<torch::Tensor> snapshot() const;

  void broadcast_parameters();

  // --- Checkpoints. ---

  std::string serialize_state();

  void save_checkpoint(int step);

  // Rank 0 reads and validates the checkpoint and sends it to every rank; all load the same bytes. Returns
  // the step it was taken after.
  int resume();

  static void broadcast_string(std::string& s);

  // --- Validation. ---

  int validate(bool fresh_start);

  int validate_lockstep();

  // Rank 0 retrains a single model on the global batches of the first K steps and compares it with the
  // distributed run's parameters after step K (informational: rounding differences grow with the steps at
  // a rate set by the training dynamics, not by the collectives).
  void validate_reference(bool fresh_start);

  // Measured allreduce time per bucket next to the simulator's prediction of the same schedule on the
  // calibrated topology, with the reduction throughput measured here.
  void predict_buckets();

  // Each bucket's schedule run on its own after a barrier, as nccl-tests times a collective: the slowest
  // rank's time, median of five runs after one warm-up. Collective: every rank calls it.
  std::vector<double> isolated_bucket_seconds();

  // Bytes of result per second of the reduction this rank runs (f32 sum, 4 MiB operands), measured while
  // every rank does the same, as in a collective.

  // --- Gloo, side by side. ---

  void compare_gloo(int start_step);

  // Global samples per second at the median step time (the first step, with its one-time costs, excluded).
  double samples_per_second(std::vector<double> step_s) const;

  // --- Outputs. ---

  void log_params(train::MlflowRun& run);

  void write_csv();

  void write_timeline();

  const TrainOptions o_;
  MpiWorld& world_;
  Transport& transport_;
  PredictFn predict_;
  const int P_, rank_;
  torch::Device device_{torch::kCPU};
  std::shared_ptr<const topo::Topology> topology_;
  Dataset data_;
  std::optional<Sampler> sampler_;
  std::shared_ptr<torch::nn::Module> model_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_of_;
  AllreduceFn allreduce_;
  Bucket* current_ = nullptr;  // the bucket being allreduced
  bool recording_ = false;
  double step_comm_s_ = 0;
  Workspace workspace_;
  Clock::time_point run_start_;
  std::vector<StepRecord> records_;
  std::vector<double> engine_step_s_;
  std::vector<TraceSpan> spans_;
  std::vector<torch::Tensor> initial_, reference_snapshot_;
  std::shared_ptr<torch::nn::Module> reference_;  // the lockstep reference model (rank 0)
  std::vector<double> lockstep_errors_;
};

}  // namespace cclab::real
