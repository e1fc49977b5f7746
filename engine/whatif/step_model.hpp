// The data-parallel training step as a what-if: backward produces gradients in reverse registration order,
// they are fused into buckets, and each bucket's allreduce goes out in order on one stream, overlapped with
// the rest of backward (PyTorch DDP; Horovod's tensor fusion). step = forward + max(backward, end of the last
// allreduce) + optimizer. The allreduce time of a bucket comes from a timer (the α-β model or the simulator)
// on the engine's own verified schedule for that bucket.
//
// Fusion comes in two styles. DDP: static buckets, greedy in ready order up to the cap (25 MiB; the first
// bucket 1 MiB), each sent when its last gradient is ready. Horovod: a background thread wakes every cycle
// (HOROVOD_CYCLE_TIME, 1 ms) and fuses the gradients that became ready since, up to the threshold
// (HOROVOD_FUSION_THRESHOLD, 128 MiB; 0 disables fusion) — Horovod's
// defaults (horovod/horovod, docs/tensor-fusion.rst and horovod/common/operations.cc).
//
// ZeRO-style sharding (stage 2) replaces each bucket's allreduce with a reduce-scatter; each rank then runs
// the optimizer on its 1/P shard and the updated parameters are allgathered, bucket by bucket, before the
// next forward (not overlapped: the conservative end of what DeepSpeed achieves).
//
// A tensor's gradient is ready when backward has done the work of the layers after it: backward's time is
// split over the tensors in proportion to their backward cost (Tensor::backward: FLOPs, plus activation bytes
// at the GPU's machine balance — a roofline sum, so that memory-bound layers such as batch norm weigh what
// they take), last tensors first. A workload without costs (a file that gives none) splits by parameter
// count, the old rule, which makes a cheap layer with many parameters (VGG's classifier) look expensive.
// While a collective is in flight backward progresses at 1 - overlap_slowdown of its rate (ComputeProfile),
// which delays the gradients that become ready then, and backward's end.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/collective.hpp"
#include "engine/whatif/workload.hpp"

namespace cclab {

struct ComputeProfile {
  double forward_s = 0;
  double backward_s = 0;
  double optimizer_s = 0;
  int batch_per_gpu = 1;
  // Streaming multiprocessors of the GPU (0: unknown). NCCL runs a collective as one thread block per
  // channel, each on an SM of its own, so while a bucket's collective is in flight backward runs on SMs - C
  // of them.
  int sms = 0;
  // The fraction of backward's throughput lost while a collective is in flight, in [0, 1): set, or -1 for
  // C / sms with C the collective's channels (0 when sms is unknown).
  double overlap_slowdown = -1;
  // The GPU's peak f16 FLOP rate over its memory bandwidth: a byte of backward's memory traffic takes this
  // many FLOPs' time (0: unknown, taken as the A100's; predict fills it from the topology's GPU).
  double flops_per_byte = 0;
  // Framework work per bucket on the communication stream (DDP's bucket bookkeeping and copies, a Horovod
  // cycle's negotiation), added to each bucket's collective. Default 0: no published figure we trust; `cclab
  // train` measures buckets whole.
  double bucket_overhead_s = 0;
  // The input pipeline's floor: a step takes at least this long (data loading and augmentation that the
  // GPUs wait for). 0: none.
  double input_floor_s = 0;
  // Variation of one GPU's compute in a step: the coefficient of variation of its forward + backward +
  // optimizer time across the job's GPUs (chips of one SKU differ: manufacturing and power management) and
  // steps (clocks, thermals, host jitter). Every step waits for the slowest of the P GPUs, whose expected
  // time is (1 + jitter·E[max of P standard normals]) of the mean (expected_max_of_normals): a GPU slower
  // than most paces the whole job, so what a synchronous step loses grows with P. -1: unresolved, which
  // predict resolves to kGpuVariation (and predict_step counts as 0); measure yours: the spread of per-GPU
  // step times.
  double jitter = -1;
};

// The default variation of GPU compute (compute.jitter): 1.5 %. Sinha et al., "Not All GPUs Are Created
// Equal: Characterizing Variability in Large-Scale, Accelerator-Rich Systems" (SC'22, arXiv 2208.11035),
// measured over 90 % of the GPUs of five clusters (Summit, Vortex, Frontera, Longhorn, Corona; NVIDIA and
// AMD GPUs, air and water cooled) an average performance variation of 8 % between GPUs of one SKU (outliers
// aside; up to 22 %, outliers up to 1.5x slower than the median). Taken as the spread of a normal population
// without its Tukey outliers (about ±2.7 σ), 8 % is 5.4 σ: σ ≈ 1.5 %. Step-to-step variation of one GPU adds
// to it; we know no published figure for that and leave it out.
inline constexpr double kGpuVariation = 0.015;

// E[max of n independent standard normal variables]: 0 for n = 1, 1/sqrt(pi) for 2, 1.42 for 8, 2.34 for 64,
// 3.25 for 1,024 (numerical integration of x·n·phi(x)·Phi(x)^(n-1)). What a synchronous step loses to jitter
// grows with it: slowly, about sqrt(2 ln n).
double expected_max_of_normals(int n);

// Machine balance (peak dense f16 tensor FLOP/s over HBM bytes/s) of a GPU architecture, from NVIDIA's
// datasheets: V100 SXM2 125 TFLOP/s / 900 GB/s; A100 SXM 80 GB 312 TFLOP/s / 2,039 GB/s; H100 SXM 989
// TFLOP/s / 3.35 TB/s; B200 2.25 PFLOP/s / 8 TB/s. `arch`: volta, ampere, hopper, blackwell; 0 otherwise.
double gpu_flops_per_byte(std::string_view arch);

// Defaults for a few workload/GPU pairs, from published per-GPU training throughput (marked as defaults:
// measure yours). Returns false when there is no entry.
bool default_compute(const std::string& workload, const std::string& gpu, ComputeProfile& out);

enum class FusionStyle { DdpBuckets, HorovodCycle };

struct FusionPolicy {
  FusionStyle style = FusionStyle::DdpBuckets;
  std::uint64_t threshold_bytes = 25ULL << 20;    // DDP bucket_cap_mb = 25; Horovod's fusion threshold
  std::uint64_t first_bucket_bytes = 1ULL << 20;  // DDP's first bucket (DDP style only)
  double cycle_s = 1e-3;                          // Horovod cycle time (Horovod style only)
  bool fp16_compression = false;                  // reduce f16 gradients (half the bytes)
};

enum class GradientSync { AllReduce, ZeroSharded };

struct Bucket {
  std::uint64_t elements = 0;
  std::size_t first_tensor = 0,
              last_tensor = 0;  // registration indices covered (first >= last: reverse order)
  double ready_s = 0, start_s = 0, end_s = 0;
  std::string algorithm;
  // ZeRO only: the parameter allgather of this bucket after the optimizer.
  double gather_start_s = 0, gather_end_s = 0;
  std::string gather_algorithm;
};

// One GPU's compute in a step, from the step's start (the step's timeline draws these).
struct ComputeSpans {
  double forward_end_s = 0;
  double backward_end_s = 0;
  double optimizer_start_s = 0;  // after the last gradient is reduced and the slowest backward is done
  double optimizer_end_s = 0;
};

struct StepPrediction {
  std::vector<Bucket> buckets;
  ComputeSpans slowest;  // the slowest GPU's, which sets the step's pace
  ComputeSpans healthy;  // every other GPU's (the same as slowest without stragglers)
  double step_s = 0;
  double compute_s = 0;        // forward + backward + optimizer
  double communication_s = 0;  // sum of allreduce times
  double exposed_s = 0;        // step - compute: the communication backward did not hide
  double samples_per_s = 0;
  double speedup = 0;     // over one GPU running the same per-GPU batch without communication
  double efficiency = 0;  // speedup / GPUs
};

// Time of one allreduce of `spec`; sets `algorithm` to the algorithm it used (for "auto").
using CollectiveTimer = std::function<double(const CollectiveSpec& spec, std::string& algorithm)>;

// Buckets in send order with their ready times (DDP: static; Horovod: per cycle).
std::vector<Bucket> make_buckets(const Workload& workload, const ComputeProfile& compute,
                                 const FusionPolicy& fusion, DType dtype);
// `straggler_factor` > 1: the slowest GPU's compute is that much slower; it sets the step's pace (every
// bucket waits for its gradients), while the one-GPU reference of speedup and efficiency stays healthy.
// compute.jitter slows the pace further by the expected slowest of world_size GPUs (the straggler taken as
// the one that draws it: an upper bound with stragglers, exact without).
// compute.overlap_slowdown < 0 (unresolved) counts as none.
StepPrediction predict_step(const Workload& workload, const ComputeProfile& compute,
                            const FusionPolicy& fusion, int world_size, const CollectiveTimer& timer,
                            GradientSync sync = GradientSync::AllReduce, double straggler_factor = 1.0);

}  // namespace cclab
