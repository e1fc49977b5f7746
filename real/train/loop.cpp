// The training loop: the model and optimizer, the steps, parameters as one flat tensor, checkpoints.
#include "real/train/trainer.hpp"

namespace cclab::real {

Trainer::Trainer(const TrainOptions& o, MpiWorld& world, Transport& transport, const PredictFn& predict)
    : o_(o), world_(world), transport_(transport), predict_(predict), P_(world.size()), rank_(world.rank()) {
  if (o.steps < 1) throw ConfigError("--steps must be at least 1");
  if (o.batch < 1) throw ConfigError("--batch must be at least 1");
  if (o.fusion != "ddp" && o.fusion != "horovod")
    throw ConfigError(fmt::format("--fusion '{}' (valid: ddp, horovod)", o.fusion));
  if (!find_algorithm(Collective::AllReduce, o.algo) && !is_selection(Collective::AllReduce, o.algo)) {
    throw ConfigError(fmt::format("--algo '{}' (valid: {}, auto, nccl, or an NCCL_ALGO name)", o.algo,
                                  algorithm_names(Collective::AllReduce)));
  }
  if (transport.on_device()) {
    if (!torch::cuda::is_available()) {
      throw ConfigError(
          "--transport nccl needs a CUDA-enabled LibTorch (configure with "
          "-DTorch_DIR=/path/to/libtorch/share/"
          "cmake/Torch)");
    }
    device_ = torch::Device(torch::kCUDA, world.local_rank() % static_cast<int>(torch::cuda::device_count()));
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

int Trainer::run() {
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

double Trainer::lr_at(int step) const {
  const double warm = o_.warmup > 0 ? std::min(1.0, (step + 1.0) / o_.warmup) : 1.0;
  return o_.lr * P_ * warm;
}

void Trainer::set_lr(torch::optim::SGD& optimizer, double lr) {
  for (auto& group : optimizer.param_groups())
    static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
}

std::pair<torch::Tensor, torch::Tensor> Trainer::batch(int step, int rank) {
  const torch::Tensor idx = sampler_->indices(step, rank);
  return {data_.inputs.index_select(0, idx).to(device_), data_.labels.index_select(0, idx).to(device_)};
}

// Trains steps [first, last); returns each step's wall time.
std::vector<double> Trainer::train_steps(int first, int last, const AllreduceFn& allreduce, bool record,
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
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, metrics, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
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
std::vector<torch::Tensor> Trainer::momentum_buffers() {
  std::vector<torch::Tensor> buffers;
  auto& state = optimizer_->state();
  for (const auto& p : params_) {
    const auto it = state.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
    buffers.push_back(it == state.end()
                          ? torch::Tensor()
                          : static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer().clone());
  }
  return buffers;
}

// One step of a single process on the whole global batch, from the same parameters and momentum the
// distributed step started from, against the distributed step's result: the relative L2 difference of the
// parameters. This isolates what the collectives contribute; a free-running comparison over many steps
// also measures how training dynamics amplify rounding (reported separately).
double Trainer::reference_step_error(int step, const std::vector<torch::Tensor>& before,
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
  torch::nn::functional::cross_entropy(train::forward(reference_, torch::cat(xs)), torch::cat(ys)).backward();
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

bool Trainer::replicas_identical() {
  const std::uint64_t mine = hash_parameters(params_);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(P_));
  check_mpi(MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD),
            "MPI_Allgather");
  return std::all_of(all.begin(), all.end(), [&](std::uint64_t h) { return h == all[0]; });
}

std::vector<torch::Tensor> Trainer::snapshot() const {
  std::vector<torch::Tensor> copy;
  for (const auto& p : params_)
    copy.push_back(p.detach().clone());
  return copy;
}

void Trainer::broadcast_parameters() {
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

std::string Trainer::serialize_state() {
  torch::serialize::OutputArchive archive;
  model_->save(archive);
  optimizer_->save(archive);
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

void Trainer::save_checkpoint(int step) {
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
int Trainer::resume() {
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

void Trainer::broadcast_string(std::string& s) {
  std::uint64_t size = s.size();
  check_mpi(MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
  s.resize(size);
  for (std::uint64_t at = 0; at < size; at += 1ULL << 30) {
    const int n = static_cast<int>(std::min<std::uint64_t>(size - at, 1ULL << 30));
    check_mpi(MPI_Bcast(s.data() + at, n, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  }
}

int run_training(const TrainOptions& options, MpiWorld& world, Transport& transport,
                 const PredictFn& predict) {
  return Trainer(options, world, transport, predict).run();
}

}  // namespace cclab::real
