// Host reduction kernels against a STREAM-like copy, in one run: the real executor's receive-reduce costs one
// kernel call per chunk, so on CPUs it competes with memory bandwidth. Bandwidth counts bytes read plus bytes
// written, as STREAM does (copy: 2 per element, reduce: 3), over buffers far larger than the caches.
//   build/bench/reduce_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "engine/exec/reduce_kernels.hpp"

namespace {

constexpr std::size_t kBytes = 64u << 20;  // per buffer

void copy(benchmark::State& state) {
  std::vector<std::byte> a(kBytes, std::byte{1}), b(kBytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), kBytes);
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] =
      benchmark::Counter(2.0 * kBytes * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void reduce_kernel(benchmark::State& state, cclab::DType type, cclab::ReduceOp op) {
  const std::size_t n = kBytes / cclab::dtype_size_bytes(type);
  std::vector<std::byte> a(kBytes), b(kBytes), dst(kBytes);
  for (std::size_t i = 0; i < n; ++i) {
    cclab::store_element(type, a.data(), i, static_cast<double>(i % 7));
    cclab::store_element(type, b.data(), i, static_cast<double>(i % 5));
  }
  for (auto _ : state) {
    cclab::reduce(type, op, dst.data(), a.data(), b.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] =
      benchmark::Counter(3.0 * kBytes * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(copy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(reduce_kernel, f32_sum, cclab::DType::F32, cclab::ReduceOp::Sum)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(reduce_kernel, f32_max, cclab::DType::F32, cclab::ReduceOp::Max)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(reduce_kernel, f16_sum, cclab::DType::F16, cclab::ReduceOp::Sum)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(reduce_kernel, bf16_sum, cclab::DType::BF16, cclab::ReduceOp::Sum)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
