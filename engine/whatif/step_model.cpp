#include "engine/whatif/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>

#include "common/error.hpp"
#include "engine/whatif/fusion.hpp"

namespace cclab {

bool default_compute(const std::string& workload, const std::string& gpu, ComputeProfile& out) {
  struct Entry {
    const char* workload;
    const char* gpu;
    double samples_per_s;  // per GPU
    int batch;
    int sms;
  };
  // Published single-GPU training throughput, to be replaced by measurements:
  // - ResNet-50 v1.5, NVIDIA DeepLearningExamples (PyTorch, AMP): about 2,500 img/s per A100 80GB and about
  //   5,000 per H100; V100 16GB 1,200 at batch 256 (PyTorch/Classification/ConvNets/resnet50v1.5/README.md,
  //   "Training performance: NVIDIA DGX-1 16GB", pytorch-21.03 container). BERT-large pretraining phase 1
  //   (seq 128) about 800 seq/s per A100.
  // - P100 (no tensor cores, FP32): TensorFlow's benchmarks page for the DGX-1 (P100), tf_cnn_benchmarks,
  //   batch 64 per GPU, synthetic data, one GPU: ResNet-50 219 img/s, Inception V3 142 img/s, VGG-16 154
  //   img/s (tensorflow/docs_src/performance/benchmarks.md, May 2017). These are the GPUs and the era of
  //   Horovod's published scaling runs.
  // - H200: the H100's GH100 with faster, larger memory (HBM3e, 4.8 TB/s against 3.35) and the same tensor
  //   throughput (989 dense BF16 TFLOPS in both datasheets); ResNet-50 is bound by that throughput, so we
  //   take H100's figure (memory-bound layers would run somewhat faster).
  // SMs: 56 on P100 (Tesla P100 whitepaper), 80 on V100 (Tesla V100 GPU Architecture whitepaper), 108 on
  // A100 (A100 Tensor Core GPU Architecture whitepaper), 132 on H100 and H200 SXM5 (H100 whitepaper).
  static const Entry table[] = {{"resnet50", "p100", 219, 64, 56},    {"inception_v3", "p100", 142, 64, 56},
                                {"vgg16", "p100", 154, 64, 56},       {"resnet50", "v100", 1200, 256, 80},
                                {"resnet50", "a100", 2500, 256, 108}, {"resnet50", "h100", 5000, 256, 132},
                                {"resnet50", "h200", 5000, 256, 132}, {"resnet101", "a100", 1400, 256, 108},
                                {"bert_large", "a100", 800, 64, 108}};
  for (const Entry& e : table) {
    if (workload == e.workload && gpu == e.gpu) {
      const double step = e.batch / e.samples_per_s;
      out = ComputeProfile{step / 3, 2 * step / 3, 0.0, e.batch};  // backward about twice forward
      out.sms = e.sms;
      return true;
    }
  }
  return false;
}

double gpu_flops_per_byte(std::string_view arch) {
  if (arch == "volta") return 125e12 / 900e9;
  if (arch == "ampere") return 312e12 / 2039e9;
  if (arch == "hopper") return 989e12 / 3.35e12;
  if (arch == "blackwell") return 2.25e15 / 8e12;
  return 0;
}

namespace {

// Backward's wall clock when collectives slow it down: it progresses at full rate, and at 1 - slowdown of it
// while a collective is in flight. Busy intervals come in stream order (disjoint, increasing) and each starts
// no earlier than the last time asked for, so one pass over them answers every question.
class BackwardClock {
 public:
  BackwardClock(double start_s, double slowdown) : t_(start_s), busy_rate_(1 - slowdown) {}
  void add_busy(double from_s, double to_s) {
    if (to_s > from_s) busy_.push_back({from_s, to_s});
  }
  // The wall time at which `work_s` of backward (seconds at full rate from its start) is done.
  double when(double work_s) {
    while (work_ < work_s && next_ < busy_.size()) {
      const auto [from, to] = busy_[next_];
      if (t_ < from) {  // full rate until the collective starts
        if (work_ + (from - t_) >= work_s) break;
        work_ += from - t_;
        t_ = from;
      }
      const double span = to - t_;
      if (span > 0 && work_ + span * busy_rate_ >= work_s) {
        t_ += (work_s - work_) / busy_rate_;
        work_ = work_s;
        return t_;
      }
      if (span > 0) work_ += span * busy_rate_;
      t_ = std::max(t_, to);
      ++next_;
    }
    if (work_s > work_) {
      t_ += work_s - work_;
      work_ = work_s;
    }
    return t_;
  }

 private:
  double t_, work_ = 0, busy_rate_;
  std::vector<std::pair<double, double>> busy_;
  std::size_t next_ = 0;
};

// Time at which backward has produced tensor k's gradient: backward runs from the last tensor towards the
// first, each tensor's share of its time in proportion to its backward cost (or its parameters).
std::vector<double> ready_times(const Workload& w, const ComputeProfile& compute) {
  const bool by_cost = w.has_backward_costs();
  const double balance = compute.flops_per_byte > 0 ? compute.flops_per_byte : gpu_flops_per_byte("ampere");
  const auto weight = [&](const Tensor& t) {
    return by_cost ? t.backward.flops + balance * t.backward.bytes : static_cast<double>(t.elements);
  };
  // Cumulative cost in backward order, summed once so that the first tensor is ready exactly at the end.
  std::vector<double> covered(w.tensors.size());
  double sum = 0;
  for (std::size_t k = w.tensors.size(); k-- > 0;)
    covered[k] = sum += weight(w.tensors[k]);
  const double total = std::max(sum, 1.0);
  std::vector<double> ready(w.tensors.size());
  for (std::size_t k = 0; k < w.tensors.size(); ++k)
    ready[k] = compute.forward_s + compute.backward_s * covered[k] / total;
  return ready;
}

}  // namespace

std::vector<Bucket> make_buckets(const Workload& w, const ComputeProfile& compute, const FusionPolicy& fusion,
                                 DType dtype) {
  const std::vector<double> ready = ready_times(w, compute);
  const std::uint64_t elem = dtype_size_bytes(dtype);
  const bool horovod = fusion.style == FusionStyle::HorovodCycle;
  // Gradients become ready in reverse registration order.
  const std::size_t n = w.tensors.size();
  std::vector<std::uint64_t> bytes(n);
  std::vector<double> tick(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t k = n - 1 - j;
    bytes[j] = w.tensors[k].elements * elem;
    // Horovod: the tick of the background cycle at or after the gradient is ready.
    tick[j] = horovod && fusion.cycle_s > 0 ? std::ceil(ready[k] / fusion.cycle_s - 1e-9) * fusion.cycle_s
                                            : ready[k];
  }
  const FusionRule rule{
      !horovod && fusion.first_bucket_bytes > 0 ? fusion.first_bucket_bytes : fusion.threshold_bytes,
      fusion.threshold_bytes, horovod};
  std::vector<Bucket> buckets;
  for (const BucketSpan& span :
       assign_buckets(bytes, rule, horovod ? std::span<const double>(tick) : std::span<const double>())) {
    Bucket b;
    b.first_tensor = n - 1 - span.begin;
    b.last_tensor = n - span.end;
    for (std::size_t j = span.begin; j < span.end; ++j)
      b.elements += w.tensors[n - 1 - j].elements;
    b.ready_s = tick[span.end - 1];  // sent when its last gradient is (Horovod: at that tick)
    buckets.push_back(std::move(b));
  }
  return buckets;
}

double expected_max_of_normals(int n) {
  if (n < 1) throw ConfigError("expected_max_of_normals: n must be >= 1");
  if (n == 1) return 0;
  static std::mutex mutex;
  static std::map<int, double> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(n); it != known.end()) return it->second;
  // Midpoint rule over [-12, 12]: the density n·phi(x)·Phi(x)^(n-1) is smooth and negligible outside for any
  // n a cluster has (its mode is near sqrt(2 ln n) < 6 up to 10^7).
  constexpr double kFrom = -12, kTo = 12;
  constexpr int kSteps = 48000;
  const double h = (kTo - kFrom) / kSteps;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double x = kFrom + (i + 0.5) * h;
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    const double Phi = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    sum += x * n * phi * std::pow(Phi, n - 1);
  }
  return known[n] = sum * h;
}

StepPrediction predict_step(const Workload& w, const ComputeProfile& healthy, const FusionPolicy& fusion,
                            int world_size, const CollectiveTimer& timer, GradientSync sync,
                            double straggler_factor) {
  if (world_size < 1) throw ConfigError("predict: the world needs at least one GPU");
  if (!(straggler_factor >= 1)) throw ConfigError("predict: a straggler factor is >= 1");
  if (!(healthy.jitter < 1))
    throw ConfigError("predict: the compute jitter (coefficient of variation) must be in [0, 1)");
  // The step runs at the slowest GPU's pace: a straggler's, and the slowest draw of the jitter (unresolved,
  // negative, counts as none).
  straggler_factor *= 1 + std::max(0.0, healthy.jitter) * expected_max_of_normals(world_size);
  ComputeProfile compute = healthy;
  compute.forward_s *= straggler_factor;
  compute.backward_s *= straggler_factor;
  compute.optimizer_s *= straggler_factor;
  if (compute.batch_per_gpu < 1 || compute.forward_s < 0 || compute.backward_s < 0 ||
      compute.optimizer_s < 0 || compute.bucket_overhead_s < 0 || compute.input_floor_s < 0) {
    throw ConfigError("predict: compute times must be >= 0 and the batch >= 1");
  }
  const DType dtype = fusion.fp16_compression ? DType::F16 : DType::F32;
  const bool zero = sync == GradientSync::ZeroSharded;
  StepPrediction p;
  p.buckets = make_buckets(w, compute, fusion, dtype);
  auto collective_time = [&](Collective c, std::uint64_t elements, std::string& algorithm) {
    if (world_size == 1) return 0.0;
    CollectiveSpec spec;
    spec.collective = c;
    spec.count = elements;
    spec.dtype = dtype;
    spec.world_size = world_size;
    return timer(spec, algorithm);
  };
  if (!(compute.overlap_slowdown < 1))
    throw ConfigError("predict: the compute slowdown while collectives run must be in [0, 1)");
  // Unresolved (-1, the caller knows no channel count): no slowdown.
  BackwardClock clock(compute.forward_s, std::max(0.0, compute.overlap_slowdown));
  double stream_free = 0;
  for (Bucket& b : p.buckets) {
    // make_buckets timed readiness at full rate: the work done by then, on the slowed clock.
    b.ready_s = clock.when(b.ready_s - compute.forward_s);
    b.start_s = std::max(b.ready_s, stream_free);
    const double duration =
        collective_time(zero ? Collective::ReduceScatter : Collective::AllReduce, b.elements, b.algorithm) +
        compute.bucket_overhead_s;
    b.end_s = b.start_s + duration;
    clock.add_busy(b.start_s, b.end_s);
    stream_free = b.end_s;
    p.communication_s += duration;
  }
  const double backward_end = clock.when(compute.backward_s);
  const double optimizer_s = zero ? compute.optimizer_s / world_size : compute.optimizer_s;
  const double optimizer_start = std::max(backward_end, stream_free);
  double end = optimizer_start + optimizer_s;
  p.slowest = {compute.forward_s, backward_end, optimizer_start, end};
  // A healthy GPU computes at its own pace, then waits for the slowest one's gradients like everyone.
  const double healthy_optimizer_s = zero ? healthy.optimizer_s / world_size : healthy.optimizer_s;
  // Its backward shares the GPU with the same collectives in flight.
  BackwardClock healthy_clock(healthy.forward_s, std::max(0.0, compute.overlap_slowdown));
  for (const Bucket& b : p.buckets)
    healthy_clock.add_busy(b.start_s, b.end_s);
  p.healthy = {healthy.forward_s, healthy_clock.when(healthy.backward_s), optimizer_start,
               optimizer_start + healthy_optimizer_s};
  if (zero) {
    for (Bucket& b : p.buckets) {
      b.gather_start_s = end;
      end += collective_time(Collective::AllGather, b.elements, b.gather_algorithm);
      b.gather_end_s = end;
      p.communication_s += b.gather_end_s - b.gather_start_s;
    }
  }
  p.compute_s = compute.forward_s + compute.backward_s + optimizer_s;
  // The input pipeline paces the step when it is the slower part (it runs beside the GPU's work).
  p.step_s = std::max(end, healthy.input_floor_s);
  p.exposed_s = p.step_s - p.compute_s;
  p.samples_per_s = world_size * compute.batch_per_gpu / p.step_s;
  // The one-GPU reference runs the whole optimizer and no communication.
  const double single =
      healthy.batch_per_gpu /
      std::max(healthy.forward_s + healthy.backward_s + healthy.optimizer_s, healthy.input_floor_s);
  p.speedup = p.samples_per_s / single;
  p.efficiency = p.speedup / world_size;
  return p;
}

}  // namespace cclab
