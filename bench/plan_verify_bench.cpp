// Plan + verify time per algorithm, two ways:
// - plan_and_verify: the explicit form (every op planned and fully verified), 8 … 4096 ranks of DGX A100
// nodes,
//   one channel and one chunk per block, the smallest schedule each algorithm can have, so the figure is the
//   engine's own cost per op;
// - compact: the compact form as `cclab plan` works on it (O(C·P) preconditions for ring, tree and NVLSTree
//   passes, O(1) for SHARP passes, the full verifier on explicit passes), 1 GiB with the default channels and
//   1 MiB chunks, 1,024 … 16,384 ranks of DGX H100 nodes (on SHARP switches for collnet and nvls_sharp; the
//   topology is built once, outside the timing).
//   build/bench/plan_verify_bench --benchmark_filter='ring/4096'
//   build/bench/plan_verify_bench --benchmark_filter='compact'
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include "engine/check/verified.hpp"
#include "engine/check/verifier.hpp"
#include "engine/plan/selection.hpp"
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

// keys: preset keys after the node count (",sharp=1": switches that reduce in the network).
void compact(benchmark::State& state, const char* algorithm, const char* keys) {
  const int ranks = static_cast<int>(state.range(0));
  const cclab::topo::Topology topology =
      cclab::topo::make_preset(fmt::format("dgx_h100:{}{}", ranks / 8, keys));
  const auto spec = cclab::spec_for(topology, cclab::Collective::AllReduce, 256ULL << 20, cclab::DType::F32);
  std::uint64_t ops = 0;
  for (auto _ : state) {
    auto planned = cclab::plan_compact(spec, topology, algorithm);
    if (!planned.schedule) {
      state.SkipWithError(planned.reason.c_str());
      return;
    }
    const cclab::VerifiedSchedule verified = cclab::verify_compact(std::move(*planned.schedule));
    ops = cclab::count_explicit_ops(verified.compact());
  }
  state.counters["explicit_ops"] = static_cast<double>(ops);
}

void apply_scale(benchmark::internal::Benchmark* b) {
  for (int ranks : {1024, 4096, 16384})
    b->Arg(ranks);
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.2);
}

BENCHMARK_CAPTURE(compact, ring, "ring", "")->Apply(apply_scale);
BENCHMARK_CAPTURE(compact, tree, "tree", "")->Apply(apply_scale);
BENCHMARK_CAPTURE(compact, hierarchical, "hierarchical", "")->Apply(apply_scale);
BENCHMARK_CAPTURE(compact, leader, "leader", "")->Apply(apply_scale);
BENCHMARK_CAPTURE(compact, halving_doubling, "halving_doubling", "")->Apply(apply_scale);
BENCHMARK_CAPTURE(compact, nvls_tree, "nvls_tree", "")->Apply(apply_scale);
BENCHMARK_CAPTURE(compact, collnet, "collnet", ",sharp=1")->Apply(apply_scale);
BENCHMARK_CAPTURE(compact, nvls_sharp, "nvls_sharp", ",sharp=1")->Apply(apply_scale);

BENCHMARK_CAPTURE(plan_and_verify, ring, "ring")->Apply(apply_sizes);
BENCHMARK_CAPTURE(plan_and_verify, tree, "tree")->Apply(apply_sizes);
BENCHMARK_CAPTURE(plan_and_verify, hierarchical, "hierarchical")->Apply(apply_sizes);
BENCHMARK_CAPTURE(plan_and_verify, halving_doubling, "halving_doubling")->Apply(apply_sizes);

}  // namespace

BENCHMARK_MAIN();
