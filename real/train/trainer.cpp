#include <mpi.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/check/verified.hpp"
#include "engine/check/verifier.hpp"
#include "engine/exec/reduce_kernels.hpp"
#include "engine/ir/trace.hpp"
#include "engine/plan/selection.hpp"
#include "engine/whatif/fusion.hpp"
#include "real/executor.hpp"
#include "real/mpi_transport.hpp"
#include "real/point_to_point.hpp"
#include "real/train/checkpoint.hpp"
#include "real/train/mlflow.hpp"
#include "real/train/models.hpp"
#include "real/train/train.hpp"
#include "topology/presets.hpp"
#if CCLAB_HAVE_GLOO
#include "real/gloo_collectives.hpp"
#endif

namespace cclab::real {
namespace {

using Clock = std::chrono::steady_clock;
using train::Dataset;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// FNV-1a over the parameters' bytes: equal hashes on all ranks = bitwise-identical replicas.
std::uint64_t hash_parameters(const std::vector<torch::Tensor>& params) {
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
  Trainer(const TrainOptions& o, MpiWorld& world, Transport& transport, const PredictFn& predict)
      : o_(o),
        world_(world),
        transport_(transport),
        predict_(predict),
        P_(world.size()),
        rank_(world.rank()) {
    if (o.steps < 1) throw ConfigError("--steps must be at least 1");
    if (o.batch < 1) throw ConfigError("--batch must be at least 1");
    if (o.fusion != "ddp" && o.fusion != "horovod")
      throw ConfigError(fmt::format("--fusion '{}' (valid: ddp, horovod)", o.fusion));
    if (o.algo != "auto" && !find_algorithm(Collective::AllReduce, o.algo)) {
      throw ConfigError(
          fmt::format("--algo '{}' (valid: auto, {})", o.algo, algorithm_names(Collective::AllReduce)));
    }
    if (transport.on_device()) {
      if (!torch::cuda::is_available()) {
        throw ConfigError(
            "--transport nccl needs a CUDA-enabled LibTorch (configure with "
            "-DTorch_DIR=/path/to/libtorch/share/"
            "cmake/Torch)");
      }
      device_ =
          torch::Device(torch::kCUDA, world.local_rank() % static_cast<int>(torch::cuda::device_count()));
    }
    // One intra-op thread: results independent of thread scheduling (bitwise resume) and no oversubscription
    // when ranks share cores.
    torch::set_num_threads(1);
    topology_ = topo::load_topology_shared(o.topology.empty() ? world.derived_topology() : o.topology);
    if (static_cast<int>(topology_->gpus().size()) != P_) {
      throw ConfigError(
          fmt::format("--topology has {} GPUs, the MPI world {} ranks", topology_->gpus().size(), P_));
    }
    data_ = train::make_dataset(o.dataset, o.seed);
    sampler_.emplace(o.dataset, P_, o.batch, o.seed);
  }

  int run() {
    build_model(/*hooks=*/true);
    int start_step = 0;
    if (!o_.resume.empty()) {
      start_step = resume();
    } else {
      broadcast_parameters();
    }
    initial_ = snapshot();
    const bool fresh_start = start_step == 0;
    if (start_step >= o_.steps)
      throw ConfigError(
          fmt::format("the checkpoint is at step {}, --steps is {}: nothing to do", start_step, o_.steps));
    std::unique_ptr<train::MlflowRun> mlflow;
    if (rank_ == 0 && !o_.mlflow.empty()) {
      mlflow = std::make_unique<train::MlflowRun>(o_.mlflow, fmt::format("{}-{}-{}r", o_.model, o_.algo, P_));
      log_params(*mlflow);
    }
    print0(
        "# cclab train: {} ({} parameters, {:.2f} MiB), {} ranks x batch {}, {} buckets ({}), algorithm {}, "
        "transport {}{}, steps {}..{}\n",
        o_.model, parameter_count(), parameter_count() * 4.0 / (1 << 20), P_, o_.batch, buckets_.size(),
        o_.fusion, o_.algo, transport_.name(), o_.fp16 ? ", fp16 compression" : "", start_step + 1, o_.steps);

    AllreduceFn engine = [this](const CollectiveSpec& spec, void* data) { engine_allreduce(spec, data); };
    engine_step_s_ = train_steps(start_step, o_.steps, engine, /*record=*/true, mlflow.get());
    const std::uint64_t final_hash = hash_parameters(params_);
    print0("# final parameter hash: {:016x} (step {})\n", final_hash, o_.steps);

    int status = 0;
    if (o_.validate) status |= validate(fresh_start);
    if (o_.compare_gloo) compare_gloo(start_step);
    if (rank_ == 0) {
      write_csv();
      write_timeline();
      if (mlflow) mlflow->finish(status == 0);
    }
    return status;
  }

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

  void build_model(bool hooks) {
    // Ranks other than 0 start from different weights on purpose: the broadcast must make them equal.
    torch::manual_seed(o_.seed + 7919ULL * static_cast<std::uint64_t>(rank_));
    model_ = train::make_model(o_.model);
    model_->to(device_);
    params_ = model_->parameters();
    optimizer_ =
        std::make_unique<torch::optim::SGD>(params_, torch::optim::SGDOptions(o_.lr).momentum(o_.momentum));
    make_buckets();
    if (hooks) {
      for (std::size_t i = 0; i < params_.size(); ++i)
        params_[i].register_hook([this, i](torch::Tensor grad) { on_gradient(static_cast<int>(i), grad); });
    }
  }

  // Gradients become ready in reverse registration order; they are fused by the rule the step model predicts
  // with (engine/whatif/fusion.hpp): DDP fills a small first bucket, then full ones; Horovod one threshold.
  void make_buckets() {
    buckets_.clear();
    bucket_of_.assign(params_.size(), -1);
    const int n = static_cast<int>(params_.size());
    std::vector<std::uint64_t> bytes(params_.size());
    for (int j = 0; j < n; ++j) bytes[j] = static_cast<std::uint64_t>(params_[n - 1 - j].numel()) * 4;
    const bool ddp = o_.fusion == "ddp";
    const FusionRule rule{ddp ? o_.first_bucket_bytes : o_.bucket_bytes, o_.bucket_bytes, !ddp};
    for (const BucketSpan& span : assign_buckets(bytes, rule)) {
      Bucket& b = buckets_.emplace_back();
      for (std::size_t j = span.begin; j < span.end; ++j) {
        const int i = n - 1 - static_cast<int>(j);
        bucket_of_[i] = static_cast<int>(buckets_.size()) - 1;
        b.params.push_back(i);
        b.offsets.push_back(b.count);
        b.count += params_[i].numel();
      }
    }
    const auto options = torch::TensorOptions().dtype(torch::kFloat).device(device_);
    for (Bucket& b : buckets_) {
      b.flat = torch::zeros({b.count}, options);
      if (o_.fp16) b.half = torch::zeros({b.count}, options.dtype(torch::kHalf));
    }
  }

  void on_gradient(int param, const torch::Tensor& grad) {
    if (!allreduce_) return;  // the single-process reference trains without the hooks' collectives
    Bucket& b = buckets_[bucket_of_[param]];
    const auto k =
        static_cast<std::size_t>(std::find(b.params.begin(), b.params.end(), param) - b.params.begin());
    b.flat.narrow(0, b.offsets[k], params_[param].numel()).copy_(grad.reshape(-1));
    if (++b.arrived == static_cast<int>(b.params.size())) sync_bucket(b);
  }

  // Allreduces one full bucket (sum), then averages; times it for the step record and the timeline.
  void sync_bucket(Bucket& b) {
    const auto start = Clock::now();
    const DType dtype = o_.fp16 ? DType::F16 : DType::F32;
    const CollectiveSpec spec = spec_for(*topology_, Collective::AllReduce,
                                         static_cast<std::uint64_t>(b.count), dtype, ReduceOp::Sum);
    if (o_.fp16) b.half.copy_(b.flat);
    current_ = &b;
    allreduce_(spec, o_.fp16 ? b.half.data_ptr() : b.flat.data_ptr());
    if (o_.fp16) b.flat.copy_(b.half);
    b.flat.div_(P_);
    b.arrived = -1;  // done for this step
    const double seconds = seconds_since(start);
    step_comm_s_ += seconds;
    if (recording_) {
      b.seconds.push_back(seconds);
      spans_.push_back({0,
                        1,
                        fmt::format("allreduce bucket {} ({})", &b - buckets_.data(),
                                    format_size(static_cast<std::uint64_t>(b.count) * (o_.fp16 ? 2 : 4))),
                        "communication",
                        std::chrono::duration<double>(start - run_start_).count(),
                        std::chrono::duration<double>(Clock::now() - run_start_).count(),
                        {{"algorithm", b.schedule ? b.schedule->algorithm : std::string("gloo")}}});
    }
  }

  void engine_allreduce(const CollectiveSpec& spec, void* data) {
    // The bucket's plan, made and verified once (a bucket's size never changes).
    Bucket* bucket = current_;
    if (!bucket->schedule) {
      PlanOptions plan;
      PlannedCompact planned = plan_compact(spec, *topology_, o_.algo, plan);
      if (!planned.schedule)
        throw ConfigError(
            fmt::format("--algo {}: no plan for {}: {}", o_.algo, describe(spec), planned.reason));
      const VerifiedSchedule verified = verify_compact(std::move(*planned.schedule));
      bucket->plan = verified.compact();
      bucket->schedule = own_row(verified.compact(), rank_);
    }
    sync_device();
    run_rank(*bucket->schedule, transport_, nullptr, data, {true, o_.timeout_s}, &workspace_);
  }

  // --- The loop. ---

  double lr_at(int step) const {
    const double warm = o_.warmup > 0 ? std::min(1.0, (step + 1.0) / o_.warmup) : 1.0;
    return o_.lr * P_ * warm;
  }

  void set_lr(torch::optim::SGD& optimizer, double lr) {
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
  }

  std::pair<torch::Tensor, torch::Tensor> batch(int step, int rank) {
    const torch::Tensor idx = sampler_->indices(step, rank);
    return {data_.inputs.index_select(0, idx).to(device_), data_.labels.index_select(0, idx).to(device_)};
  }

  // Trains steps [first, last); returns each step's wall time.
  std::vector<double> train_steps(int first, int last, const AllreduceFn& allreduce, bool record,
                                  train::MlflowRun* mlflow) {
    std::vector<double> step_seconds;
    allreduce_ = allreduce;
    recording_ = record;
    run_start_ = Clock::now();
    for (int step = first; step < last; ++step) {
      const auto start = Clock::now();
      step_comm_s_ = 0;
      for (Bucket& b : buckets_)
        b.arrived = 0;
      // Lockstep reference (rank 0, --validate, the first K steps of the run): the state this step starts
      // from.
      const bool lockstep = record && o_.validate && rank_ == 0 && step < first + o_.reference_steps;
      std::vector<torch::Tensor> before, momentum;
      if (lockstep) {
        before = snapshot();
        momentum = momentum_buffers();
      }
      auto [x, y] = batch(step, rank_);
      optimizer_->zero_grad();
      const torch::Tensor logits = train::forward(model_, x);
      const torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
      loss.backward();
      for (Bucket& b : buckets_)
        if (b.arrived >= 0) sync_bucket(b);  // parameters that got no gradient: their slots stay zero
      for (Bucket& b : buckets_)
        for (std::size_t k = 0; k < b.params.size(); ++k) {
          torch::Tensor& p = params_[b.params[k]];
          p.mutable_grad() = b.flat.narrow(0, b.offsets[k], p.numel()).view_as(p).clone();
        }
      if (o_.clip > 0) torch::nn::utils::clip_grad_norm_(params_, o_.clip);
      set_lr(*optimizer_, lr_at(step));
      optimizer_->step();
      const double step_s = seconds_since(start);
      step_seconds.push_back(step_s);
      if (lockstep) lockstep_errors_.push_back(reference_step_error(step, before, momentum));
      // Metrics averaged over the ranks (each rank's mean over an equal share of the global batch).
      double metrics[2] = {loss.item<double>(),
                           logits.argmax(1).eq(y).to(torch::kDouble).mean().item<double>()};
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, metrics, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce");
      StepRecord r{step + 1,
                   sampler_->epoch_of(step),
                   metrics[0] / P_,
                   metrics[1] / P_,
                   lr_at(step),
                   step_s,
                   step_s - step_comm_s_,
                   step_comm_s_,
                   true};
      if (o_.validate) r.identical = replicas_identical();
      if (o_.validate && step + 1 == o_.reference_steps) reference_snapshot_ = snapshot();
      if (record) {
        spans_.push_back({0,
                          0,
                          fmt::format("step {}", r.step),
                          "compute",
                          std::chrono::duration<double>(start - run_start_).count(),
                          std::chrono::duration<double>(Clock::now() - run_start_).count(),
                          {}});
        records_.push_back(r);
        if (!o_.quiet) {
          print0(
              "step {:>4}/{} epoch {:>2} loss {:.4f} acc {:.3f} lr {:.4f} | {:>8.1f} samples/s  step "
              "{:>7.1f} ms  "
              "compute {:>7.1f} ms  comm {:>6.1f} ms  exposed {:>6.1f} ms{}\n",
              r.step, o_.steps, r.epoch, r.loss, r.accuracy, r.lr, P_ * o_.batch / step_s, 1e3 * step_s,
              1e3 * r.compute_s, 1e3 * r.comm_s, 1e3 * r.comm_s,
              o_.validate ? (r.identical ? "  replicas identical" : "  REPLICAS DIFFER") : "");
        }
        if (mlflow) {
          mlflow->metric("loss", r.loss, r.step);
          mlflow->metric("accuracy", r.accuracy, r.step);
          mlflow->metric("samples_per_s", P_ * o_.batch / step_s, r.step);
          mlflow->metric("step_ms", 1e3 * step_s, r.step);
          mlflow->metric("comm_ms", 1e3 * r.comm_s, r.step);
        }
        if (o_.checkpoint_every > 0 && (step + 1) % o_.checkpoint_every == 0) save_checkpoint(step + 1);
      }
    }
    allreduce_ = nullptr;
    return step_seconds;
  }

  // SGD's momentum buffer of each parameter (undefined before the first step).
  std::vector<torch::Tensor> momentum_buffers() {
    std::vector<torch::Tensor> buffers;
    auto& state = optimizer_->state();
    for (const auto& p : params_) {
      const auto it = state.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
      buffers.push_back(
          it == state.end()
              ? torch::Tensor()
              : static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer().clone());
    }
    return buffers;
  }

  // One step of a single process on the whole global batch, from the same parameters and momentum the
  // distributed step started from, against the distributed step's result: the relative L2 difference of the
  // parameters. This isolates what the collectives contribute; a free-running comparison over many steps
  // also measures how training dynamics amplify rounding (reported separately).
  double reference_step_error(int step, const std::vector<torch::Tensor>& before,
                              const std::vector<torch::Tensor>& momentum) {
    if (!reference_) {
      reference_ = train::make_model(o_.model);
      reference_->to(device_);
    }
    auto ref = reference_->parameters();
    {
      torch::NoGradGuard no_grad;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        ref[i].copy_(before[i]);
        if (ref[i].grad().defined()) ref[i].mutable_grad().zero_();
      }
    }
    std::vector<torch::Tensor> xs, ys;
    for (int r = 0; r < P_; ++r) {
      auto [x, y] = batch(step, r);
      xs.push_back(x);
      ys.push_back(y);
    }
    torch::nn::functional::cross_entropy(train::forward(reference_, torch::cat(xs)), torch::cat(ys))
        .backward();
    if (o_.clip > 0) torch::nn::utils::clip_grad_norm_(ref, o_.clip);
    double diff2 = 0, norm2 = 0;
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      // torch::optim::SGD without dampening, Nesterov or weight decay.
      const torch::Tensor g = ref[i].grad();
      const torch::Tensor buf = momentum[i].defined() ? momentum[i] * o_.momentum + g : g;
      const torch::Tensor expected = (before[i] - lr_at(step) * buf).to(torch::kDouble);
      diff2 += (params_[i].detach().to(torch::kDouble) - expected).pow(2).sum().item<double>();
      norm2 += expected.pow(2).sum().item<double>();
    }
    return std::sqrt(diff2 / std::max(norm2, 1e-300));
  }

  bool replicas_identical() {
    const std::uint64_t mine = hash_parameters(params_);
    std::vector<std::uint64_t> all(static_cast<std::size_t>(P_));
    check_mpi(MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD),
              "MPI_Allgather");
    return std::all_of(all.begin(), all.end(), [&](std::uint64_t h) { return h == all[0]; });
  }

  // --- Parameters as one flat tensor: broadcast, snapshots. ---

  std::vector<torch::Tensor> snapshot() const {
    std::vector<torch::Tensor> copy;
    for (const auto& p : params_)
      copy.push_back(p.detach().clone());
    return copy;
  }

  void broadcast_parameters() {
    torch::Tensor flat = torch::cat([&] {
      std::vector<torch::Tensor> views;
      for (const auto& p : params_)
        views.push_back(p.detach().reshape(-1));
      return views;
    }());
    const CollectiveSpec spec =
        spec_for(*topology_, Collective::Broadcast, static_cast<std::uint64_t>(flat.numel()), DType::F32,
                 ReduceOp::Sum, 0);
    PlannedCompact planned = plan_compact(spec, *topology_, "auto");
    if (!planned.schedule) throw ConfigError(fmt::format("no broadcast plan: {}", planned.reason));
    const VerifiedSchedule verified = verify_compact(std::move(*planned.schedule));
    const Schedule own = own_row(verified.compact(), rank_);
    sync_device();
    run_rank(own, transport_, nullptr, flat.data_ptr(), {true, o_.timeout_s}, &workspace_);
    torch::NoGradGuard no_grad;
    std::int64_t offset = 0;
    for (auto& p : params_) {
      p.copy_(flat.narrow(0, offset, p.numel()).view_as(p));
      offset += p.numel();
    }
    print0("# parameters broadcast from rank 0 ({} algorithm, {})\n", verified->algorithm,
           format_size(static_cast<std::uint64_t>(flat.numel()) * 4));
  }

  // --- Checkpoints. ---

  std::string serialize_state() {
    torch::serialize::OutputArchive archive;
    model_->save(archive);
    optimizer_->save(archive);
    std::ostringstream out;
    archive.save_to(out);
    return out.str();
  }

  void save_checkpoint(int step) {
    if (rank_ != 0 || o_.checkpoint_dir.empty()) return;
    train::Checkpoint c;
    c.metadata = {{"step", step},
                  {"epoch", sampler_->epoch_of(step - 1)},
                  {"next_epoch", sampler_->position(step).epoch},
                  {"next_offset", sampler_->position(step).offset},
                  {"world_size", P_},
                  {"model", o_.model},
                  {"batch", o_.batch},
                  {"dataset", o_.dataset},
                  {"seed", o_.seed},
                  {"algorithm", o_.algo},
                  {"lr", o_.lr},
                  {"fp16", o_.fp16}};
    c.payload = serialize_state();
    const std::string path =
        train::write_checkpoint(o_.checkpoint_dir, static_cast<std::uint64_t>(step), c, o_.keep);
    print0("# checkpoint {} (step {})\n", path, step);
  }

  // Rank 0 reads and validates the checkpoint and sends it to every rank; all load the same bytes. Returns
  // the step it was taken after.
  int resume() {
    std::string error, bytes, path;
    int step = 0, written_by = 0;
    std::int64_t position[2] = {0, 0};  // the next step's epoch and offset
    if (rank_ == 0) {
      try {
        train::Checkpoint c = train::read_checkpoint(o_.resume, &path);
        const auto& m = c.metadata;
        auto must_match = [&](const char* key, const nlohmann::json& ours) {
          if (!m.contains(key) || m[key] != ours)
            throw ConfigError(fmt::format("checkpoint {}: written with {} = {}, this run has {}", path, key,
                                          m.contains(key) ? m[key].dump() : "?", ours.dump()));
        };
        must_match("model", o_.model);
        must_match("batch", o_.batch);
        must_match("dataset", o_.dataset);
        must_match("seed", o_.seed);
        step = m.at("step").get<int>();
        written_by = m.value("world_size", 0);
        position[0] = m.value("next_epoch", std::int64_t{-1});
        position[1] = m.value("next_offset", std::int64_t{-1});
        if (position[0] < 0 || position[1] < 0 || written_by < 1)
          throw ConfigError(fmt::format("checkpoint {}: no sampler position or world size in it", path));
        bytes = std::move(c.payload);
      } catch (const ConfigError& e) {
        error = e.what();
      } catch (const nlohmann::json::exception& e) {
        error = fmt::format("checkpoint {}: unreadable metadata: {}", path, e.what());
      }
    }
    broadcast_string(error);
    if (!error.empty()) throw ConfigError(error);
    check_mpi(MPI_Bcast(&step, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    check_mpi(MPI_Bcast(&written_by, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    check_mpi(MPI_Bcast(position, 2, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    broadcast_string(bytes);
    // The rest of the epoch continues from where the checkpoint left off, sharded over this run's ranks
    // (the same positions as before when the world size did not change).
    sampler_.emplace(o_.dataset, P_, o_.batch, o_.seed, step,
                     SamplerPosition{static_cast<int>(position[0]), position[1]});
    if (written_by != P_) {
      // Elastic (Horovod-style): the model and optimizer state carry over; the sampler re-shards, the
      // learning rate follows the new world size (lr_at), and every bucket is re-planned for the new world.
      print0(
          "# elastic resume: checkpoint written by {} ranks, now {}: the rest of epoch {} (from sample {}) "
          "is "
          "re-sharded, learning rate x{}/{}, collectives re-planned\n",
          written_by, P_, position[0], position[1], P_, written_by);
    }
    torch::serialize::InputArchive archive;
    std::istringstream in(bytes);
    archive.load_from(in, device_);
    model_->load(archive);
    optimizer_->load(archive);
    print0("# resumed from {} at step {}\n", path, step);
    return step;
  }

  static void broadcast_string(std::string& s) {
    std::uint64_t size = s.size();
    check_mpi(MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    s.resize(size);
    for (std::uint64_t at = 0; at < size; at += 1ULL << 30) {
      const int n = static_cast<int>(std::min<std::uint64_t>(size - at, 1ULL << 30));
      check_mpi(MPI_Bcast(s.data() + at, n, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
    }
  }

  // --- Validation. ---

  int validate(bool fresh_start) {
    int status = 0;
    const auto differing =
        std::count_if(records_.begin(), records_.end(), [](const StepRecord& r) { return !r.identical; });
    print0(
        "# validate: parameters bitwise identical on all {} ranks after every step: {} ({} of {} steps "
        "differ)\n",
        P_, differing == 0 ? "PASS" : "FAIL", differing, records_.size());
    if (differing) status = 1;
    status |= validate_lockstep();
    validate_reference(fresh_start);
    predict_buckets();
    return status;
  }

  int validate_lockstep() {
    int verdict = 0;
    if (rank_ == 0) {
      const double worst = lockstep_errors_.empty()
                               ? 0.0
                               : *std::max_element(lockstep_errors_.begin(), lockstep_errors_.end());
      const double tolerance = o_.fp16 ? 1e-2 : 1e-5;
      verdict = worst <= tolerance ? 0 : 1;
      print0(
          "# validate: each of the first {} steps vs a single-process step on the same {}-sample global "
          "batch "
          "from the same state: worst relative L2 difference {:.2e} (tolerance {:.0e}{}): {}\n",
          lockstep_errors_.size(), P_ * o_.batch, worst, tolerance, o_.fp16 ? ", fp16 compression" : "",
          verdict ? "FAIL" : "PASS");
    }
    check_mpi(MPI_Bcast(&verdict, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return verdict;
  }

  // Rank 0 retrains a single model on the global batches of the first K steps and compares it with the
  // distributed run's parameters after step K (informational: rounding differences grow with the steps at
  // a rate set by the training dynamics, not by the collectives).
  void validate_reference(bool fresh_start) {
    const int k = std::min(o_.reference_steps, o_.steps);
    if (!fresh_start || reference_snapshot_.empty()) {
      print0(
          "# validate: free-running reference skipped (the run resumed after step {}; it needs steps "
          "1..{})\n",
          records_.empty() ? 0 : records_.front().step - 1, k);
      return;
    }
    if (rank_ == 0) {
      torch::manual_seed(o_.seed);
      auto reference = train::make_model(o_.model);
      reference->to(device_);
      auto ref_params = reference->parameters();
      {
        torch::NoGradGuard no_grad;
        for (std::size_t i = 0; i < ref_params.size(); ++i)
          ref_params[i].copy_(initial_[i]);
      }
      torch::optim::SGD sgd(ref_params, torch::optim::SGDOptions(o_.lr).momentum(o_.momentum));
      for (int step = 0; step < k; ++step) {
        std::vector<torch::Tensor> xs, ys;
        for (int r = 0; r < P_; ++r) {
          auto [x, y] = batch(step, r);
          xs.push_back(x);
          ys.push_back(y);
        }
        sgd.zero_grad();
        torch::nn::functional::cross_entropy(train::forward(reference, torch::cat(xs)), torch::cat(ys))
            .backward();
        if (o_.clip > 0) torch::nn::utils::clip_grad_norm_(ref_params, o_.clip);
        set_lr(sgd, lr_at(step));
        sgd.step();
      }
      double diff2 = 0, norm2 = 0, worst = 0;
      for (std::size_t i = 0; i < ref_params.size(); ++i) {
        const torch::Tensor d = (reference_snapshot_[i] - ref_params[i].detach()).to(torch::kDouble);
        const torch::Tensor b = ref_params[i].detach().to(torch::kDouble);
        diff2 += d.pow(2).sum().item<double>();
        norm2 += b.pow(2).sum().item<double>();
        worst = std::max(worst, (d.abs().max() / b.abs().max().clamp_min(1e-30)).item<double>());
      }
      const double rel = std::sqrt(diff2 / std::max(norm2, 1e-300));
      print0(
          "# validate: free-running, parameters after step {} vs a single-process reference trained from the "
          "same "
          "start on the same global batches: relative L2 difference {:.2e}, worst tensor {:.2e} "
          "(informational: "
          "rounding differences grow through the training dynamics)\n",
          k, rel, worst);
    }
  }

  // Measured allreduce time per bucket next to the simulator's prediction of the same schedule on the
  // calibrated topology, with the reduction throughput measured here.
  void predict_buckets() {
    // Calibration: a file from `cclab calibrate`, or a quick in-process ping-pong.
    std::shared_ptr<const topo::Topology> calibrated;
    std::string source = o_.calibration;
    if (!o_.calibration.empty()) {
      calibrated = topo::load_topology_shared(o_.calibration);
    } else if (P_ > 1) {
      std::vector<std::uint64_t> sizes;
      for (std::uint64_t b = 8; b <= (16ULL << 20); b *= 4)
        sizes.push_back(b);
      // Loaded: during a collective every rank moves data at once, and here ranks share cores.
      const auto samples =
          measure_point_to_point(world_, transport_, sizes, 5, o_.timeout_s, Load::AllPairsAtOnce);
      if (rank_ == 0) calibrated = fit_calibration(world_, samples).topology;
      source = "in-process ping-pong, all rank pairs at once";
    }
    const double reduce_Bps = measure_reduce_throughput();
    const std::vector<double> isolated = isolated_bucket_seconds();
    if (rank_ != 0 || !calibrated) return;
    print0(
        "# prediction vs measurement per bucket (calibration: {}; reduction throughput measured: {})\n"
        "#   in training = median over steps 2.. of the bucket's allreduce inside backward (includes waiting "
        "for\n"
        "#   the slowest rank); isolated = the same schedule after a barrier, median of 5 (slowest rank), "
        "which is\n"
        "#   what the simulator models and what the error compares\n",
        source, format_bandwidth(reduce_Bps));
    print0("#{:>6} {:>10} {:>16} {:>15} {:>13} {:>13} {:>8}\n", "bucket", "size", "algorithm",
           "in training(us)", "isolated(us)", "predicted(us)", "error");
    std::vector<double> errors;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      Bucket& b = buckets_[i];
      if (!b.schedule || b.seconds.size() < 2) continue;
      std::vector<double> t(b.seconds.begin() + 1, b.seconds.end());
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      const double in_training = t[t.size() / 2];
      const double measured = isolated[i];
      const double predicted = predict_(*b.plan, *calibrated, reduce_Bps);
      const double error = (predicted - measured) / measured;
      const std::uint64_t bytes = static_cast<std::uint64_t>(b.count) * (o_.fp16 ? 2 : 4);
      if (bytes >= (1ULL << 20)) errors.push_back(std::abs(error));
      print0(" {:>6} {:>10} {:>16} {:>15.1f} {:>13.1f} {:>13.1f} {:>+7.1f}%\n", i, format_size(bytes),
             b.schedule->algorithm, 1e6 * in_training, 1e6 * measured, 1e6 * predicted, 100 * error);
    }
    if (errors.empty()) {
      print0("# prediction error: no bucket of 1 MiB or more\n");
      return;
    }
    std::sort(errors.begin(), errors.end());
    print0(
        "# prediction error for buckets >= 1 MiB: median {:.1f}%, max {:.1f}% ({} buckets; goal: median <= "
        "20%)\n",
        100 * errors[errors.size() / 2], 100 * errors.back(), errors.size());
  }

  // Each bucket's schedule run on its own after a barrier, as nccl-tests times a collective: the slowest
  // rank's time, median of five runs after one warm-up. Collective: every rank calls it.
  std::vector<double> isolated_bucket_seconds() {
    std::vector<double> result(buckets_.size(), 0.0);
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      Bucket& b = buckets_[i];
      if (!b.schedule) continue;
      torch::Tensor scratch =
          torch::ones({b.count}, b.flat.options().dtype(o_.fp16 ? torch::kHalf : torch::kFloat));
      std::vector<double> times;
      for (int rep = 0; rep < 6; ++rep) {
        sync_device();
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        const auto start = Clock::now();
        run_rank(*b.schedule, transport_, nullptr, scratch.data_ptr(), {true, o_.timeout_s}, &workspace_);
        double seconds = seconds_since(start);
        check_mpi(MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                  "MPI_Allreduce");
        if (rep > 0) times.push_back(seconds);
      }
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      result[i] = times[times.size() / 2];
    }
    return result;
  }

  // Bytes of result per second of the reduction this rank runs (f32 sum, 4 MiB operands), measured while
  // every rank does the same, as in a collective.
  double measure_reduce_throughput() {
    const std::size_t n = 1 << 20;
    std::vector<float> a(n, 1.0f), b(n, 2.0f);
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const auto start = Clock::now();
      reduce(DType::F32, ReduceOp::Sum, a.data(), a.data(), b.data(), n);
      best = std::min(best, seconds_since(start));
    }
    return n * 4 / best;
  }

  // --- Gloo, side by side. ---

  void compare_gloo(int start_step) {
#if CCLAB_HAVE_GLOO
    if (transport_.on_device() || o_.fp16) {
      print0("# gloo comparison skipped (it runs on CPU tensors in f32)\n");
      return;
    }
    GlooCollectives gloo(world_, o_.timeout_s);
    // The same model, start and batches, with the gradients allreduced by torch c10d's ProcessGroupGloo.
    const std::vector<torch::Tensor> engine_final = snapshot();
    {
      torch::NoGradGuard no_grad;
      for (std::size_t i = 0; i < params_.size(); ++i)
        params_[i].copy_(initial_[i]);
    }
    optimizer_ =
        std::make_unique<torch::optim::SGD>(params_, torch::optim::SGDOptions(o_.lr).momentum(o_.momentum));
    if (start_step > 0)
      print0("# gloo comparison starts from the resumed parameters with a fresh optimizer state\n");
    const std::vector<double> gloo_step_s = train_steps(
        start_step, o_.steps,
        [&gloo](const CollectiveSpec& spec, void* data) { gloo.run(spec, nullptr, data, true); },
        /*record=*/false, nullptr);
    double diff2 = 0, norm2 = 0;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      diff2 += (params_[i].detach() - engine_final[i]).to(torch::kDouble).pow(2).sum().item<double>();
      norm2 += engine_final[i].to(torch::kDouble).pow(2).sum().item<double>();
    }
    const double engine_rate = samples_per_second(engine_step_s_),
                 gloo_rate = samples_per_second(gloo_step_s);
    print0(
        "# gloo comparison ({} steps each, same model, start and batches; median step): cclab engine ({}) "
        "{:.1f} "
        "samples/s, torch c10d Gloo {:.1f} samples/s: cclab/gloo = {:.2f}x (goal >= 0.9x); final parameters "
        "differ by {:.2e} (relative L2, summation order)\n",
        gloo_step_s.size(), o_.algo, engine_rate, gloo_rate, engine_rate / gloo_rate,
        std::sqrt(diff2 / std::max(norm2, 1e-300)));
#else
    (void)start_step;
    print0("# gloo comparison skipped: built without LibTorch's c10d\n");
#endif
  }

  // Global samples per second at the median step time (the first step, with its one-time costs, excluded).
  double samples_per_second(std::vector<double> step_s) const {
    if (step_s.size() > 1) step_s.erase(step_s.begin());
    std::nth_element(step_s.begin(), step_s.begin() + step_s.size() / 2, step_s.end());
    return P_ * o_.batch / step_s[step_s.size() / 2];
  }

  // --- Outputs. ---

  void log_params(train::MlflowRun& run) {
    run.param("model", o_.model);
    run.param("world_size", std::to_string(P_));
    run.param("batch_per_rank", std::to_string(o_.batch));
    run.param("algorithm", o_.algo);
    run.param("fusion", o_.fusion);
    run.param("bucket_bytes", std::to_string(o_.bucket_bytes));
    run.param("fp16", o_.fp16 ? "true" : "false");
    run.param("lr", fmt::format("{}", o_.lr));
    run.param("transport", transport_.name());
    run.param("seed", std::to_string(o_.seed));
  }

  void write_csv() {
    if (o_.csv.empty()) return;
    std::ofstream out(o_.csv);
    out << "step,epoch,loss,accuracy,lr,step_s,compute_s,comm_s,exposed_comm_s,samples_per_s,replicas_"
           "identical\n";
    for (const StepRecord& r : records_) {
      out << fmt::format("{},{},{:.6f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.2f},{}\n", r.step,
                         r.epoch, r.loss, r.accuracy, r.lr, r.step_s, r.compute_s, r.comm_s, r.comm_s,
                         P_ * o_.batch / r.step_s, o_.validate ? (r.identical ? "yes" : "no") : "unchecked");
    }
    if (!out) throw BackendError(fmt::format("{}: cannot write the step CSV", o_.csv));
    print0("# wrote {}\n", o_.csv);
  }

  void write_timeline() {
    if (o_.timeline.empty()) return;
    TraceRows rows;
    rows.processes[0] = "rank 0";
    rows.threads[{0, 0}] = "step (compute + exposed communication)";
    rows.threads[{0, 1}] = "allreduce buckets";
    std::ofstream out(o_.timeline);
    write_chrome_trace_spans(spans_, rows, out);
    if (!out) throw BackendError(fmt::format("{}: cannot write the timeline", o_.timeline));
    print0("# wrote {} (chrome://tracing or ui.perfetto.dev)\n", o_.timeline);
  }

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

}  // namespace

int run_training(const TrainOptions& options, MpiWorld& world, Transport& transport,
                 const PredictFn& predict) {
  return Trainer(options, world, transport, predict).run();
}

}  // namespace cclab::real
