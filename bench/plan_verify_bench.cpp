// Plan + verify time for 8 … 4096 ranks (DGX A100 nodes of 8 GPUs), per algorithm: one channel and one chunk
// per block, the smallest schedule each algorithm can have, so the figure is the engine's own cost per op.
//   build/bench/plan_verify_bench --benchmark_filter='ring/4096'
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include "engine/registry.hpp"
#include "engine/verifier.hpp"
#include "topology/presets.hpp"

namespace {

void plan_and_verify(benchmark::State& state, const char* algorithm) {
  const int ranks = static_cast<int>(state.range(0));
  const cclab::topo::Topology topology = cclab::topo::make_preset(fmt::format("dgx_a100:{}", ranks / 8));
  const auto spec = cclab::spec_for(topology, cclab::Collective::AllReduce, 64ULL << 20, cclab::DType::F32);
  cclab::PlanOptions options;
  options.chunk_bytes = 0;
  options.channels = 1;
  std::size_t ops = 0;
  for (auto _ : state) {
    auto planned = cclab::plan_collective(spec, topology, algorithm, options);
    if (!planned.schedule) {
      state.SkipWithError(planned.reason.c_str());
      return;
    }
    cclab::verify_or_throw(*planned.schedule);
    ops = planned.schedule->num_ops();
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
}

void apply_sizes(benchmark::internal::Benchmark* b) {
  for (int ranks : {8, 64, 256, 1024, 4096})
    b->Arg(ranks);
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
}

BENCHMARK_CAPTURE(plan_and_verify, ring, "ring")->Apply(apply_sizes);
BENCHMARK_CAPTURE(plan_and_verify, tree, "tree")->Apply(apply_sizes);
BENCHMARK_CAPTURE(plan_and_verify, hierarchical, "hierarchical")->Apply(apply_sizes);
BENCHMARK_CAPTURE(plan_and_verify, halving_doubling, "halving_doubling")->Apply(apply_sizes);

}  // namespace

BENCHMARK_MAIN();
