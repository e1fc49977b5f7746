// GPU reduction throughput of the NCCL transport's kernels against the device's own copy, measured in the
// same run (issue goal: reductions >= 80% of copy bandwidth). Bandwidth counts the bytes each moves through
// memory: a copy reads and writes the buffer (2x), a reduction reads two operands and writes one (3x).
// Usage: cuda_reduce_bench [MiB per operand, default 256]. Exit status 77 (skipped) without a GPU.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#include "engine/ir/collective.hpp"
#include "real/nccl/reduce_kernels.cuh"

namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "cuda_reduce_bench: %s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}

template <typename F>
double seconds_per_run(F&& run, int iters) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  run();  // warm-up
  check(cudaEventRecord(start), "cudaEventRecord");
  for (int i = 0; i < iters; ++i)
    run();
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3 / iters;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("cuda_reduce_bench: SKIPPED, no usable CUDA device\n");
    return 77;
  }
  const std::size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256) << 20;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  void *a = nullptr, *b = nullptr, *c = nullptr;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMalloc(&c, bytes), "cudaMalloc");
  check(cudaMemset(a, 0, bytes), "cudaMemset");
  check(cudaMemset(b, 0, bytes), "cudaMemset");
  const int iters = 20;
  const double copy_s =
      seconds_per_run([&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice); }, iters);
  const double copy_gbs = 2.0 * bytes / copy_s / 1e9;
  std::printf("# %s, %zu MiB per operand, %d runs each\n", prop.name, bytes >> 20, iters);
  std::printf("%-22s %10s %12s %10s\n", "kernel", "time(us)", "GB/s moved", "of copy");
  std::printf("%-22s %10.1f %12.1f %9.0f%%\n", "copy (cudaMemcpy D2D)", copy_s * 1e6, copy_gbs, 100.0);
  using cclab::real::cuda::Op;
  using cclab::real::cuda::Type;
  const struct {
    const char* name;
    Type type;
    int elem;
  } types[] = {{"f32", Type::F32, 4}, {"f16", Type::F16, 2}, {"bf16", Type::BF16, 2}};
  bool ok = true;
  for (const auto& t : types) {
    const std::uint64_t n = bytes / t.elem;
    const double s = seconds_per_run(
        [&] { cclab::real::cuda::launch_reduce(nullptr, t.type, Op::Sum, c, a, b, n); }, iters);
    check(cudaGetLastError(), "launch_reduce");
    const double gbs = 3.0 * bytes / s / 1e9;
    std::printf("reduce sum %-11s %10.1f %12.1f %9.0f%%\n", t.name, s * 1e6, gbs, 100 * gbs / copy_gbs);
    ok &= gbs >= 0.8 * copy_gbs;
  }
  std::printf("# goal: every reduction >= 80%% of copy bandwidth: %s\n", ok ? "met" : "MISSED");
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
