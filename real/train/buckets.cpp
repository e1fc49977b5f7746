// Gradient buckets: filled by the autograd hooks as gradients become ready, fused by the rule the step model
// predicts with (engine/whatif/fusion.hpp), and allreduced by the engine's schedules through the one
// executor.
#include "real/train/trainer.hpp"

namespace cclab::real {

void Trainer::build_model(bool hooks) {
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
void Trainer::make_buckets() {
  buckets_.clear();
  bucket_of_.assign(params_.size(), -1);
  const int n = static_cast<int>(params_.size());
  std::vector<std::uint64_t> bytes(params_.size());
  for (int j = 0; j < n; ++j)
    bytes[j] = static_cast<std::uint64_t>(params_[n - 1 - j].numel()) * 4;
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

void Trainer::on_gradient(int param, const torch::Tensor& grad) {
  if (!allreduce_) return;  // the single-process reference trains without the hooks' collectives
  Bucket& b = buckets_[bucket_of_[param]];
  const auto k =
      static_cast<std::size_t>(std::find(b.params.begin(), b.params.end(), param) - b.params.begin());
  b.flat.narrow(0, b.offsets[k], params_[param].numel()).copy_(grad.reshape(-1));
  if (++b.arrived == static_cast<int>(b.params.size())) sync_bucket(b);
}

// Allreduces one full bucket (sum), then averages; times it for the step record and the timeline.
void Trainer::sync_bucket(Bucket& b) {
  const auto start = Clock::now();
  const DType dtype = o_.fp16 ? DType::F16 : DType::F32;
  const CollectiveSpec spec =
      spec_for(*topology_, Collective::AllReduce, static_cast<std::uint64_t>(b.count), dtype, ReduceOp::Sum);
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

void Trainer::engine_allreduce(const CollectiveSpec& spec, void* data) {
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

}  // namespace cclab::real
