// Every planner of every collective × world sizes × element counts × dtypes × in-place, through the verifier
// and the reference executor, compared exactly; then topology-derived worlds from every preset with 1 to 8
// nodes.
#include <gtest/gtest.h>

#include <bit>
#include <optional>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/check/verifier.hpp"
#include "engine/plan/registry.hpp"
#include "tests/harness.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

struct Case {
  const Algorithm* algorithm;
  int world;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const Algorithm& a : algorithms())
    for (int world : {1, 2, 3, 5, 7, 8, 11, 16, 24, 31, 64})
      // The hypercube exists for powers of two only (Planners.HypercubeRefusesOtherWorlds says so).
      if (a.name != "hypercube" || std::has_single_bit(static_cast<unsigned>(world)))
        cases.push_back({&a, world});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return fmt::format("{}_{}_P{}", to_string(info.param.algorithm->collective), info.param.algorithm->name,
                     info.param.world);
}

class PlannerMatrix : public ::testing::TestWithParam<Case> {};

// The count a case of `count` elements takes: an alltoall moves P equal blocks, so its count is `count`
// blocks' worth, count · P (uneven counts stay uneven against the channels and chunks).
std::uint64_t elements_of(const Algorithm& a, std::uint64_t count, const topo::Topology& t) {
  return a.collective == Collective::AllToAll ? count * t.gpus().size() : count;
}

// Plans, verifies and runs one configuration; reports failures with the whole configuration.
void check(const Algorithm& a, const topo::Topology& t, std::uint64_t count, DType dtype, ReduceOp op,
           int root, const PlanOptions& options) {
  const CollectiveSpec spec = spec_for(t, a.collective, elements_of(a, count, t), dtype, op, root);
  const std::string what =
      fmt::format("{} {} on {}: {}, chunk {} channels {}", to_string(a.collective), a.name, t.name(),
                  describe(spec), options.chunk_bytes, options.channels);
  const Support support = a.supports(spec, t, options);
  ASSERT_TRUE(support.ok) << what << ": " << support.reason;
  const Schedule s = a.plan(spec, t, options);
  auto error = verify(s);
  ASSERT_FALSE(error) << what << ": " << *error;
  for (bool in_place : {false, true}) {
    if (in_place && !has_in_place_form(spec.collective)) continue;
    auto mismatch = testing::run_and_check(s, in_place);
    ASSERT_FALSE(mismatch) << what << ": " << *mismatch;
  }
}

// The world a planner runs on: P single-GPU servers; for planners that need NVLink domains (NVLS) one
// NVSwitch node of P GPUs, or several (nvls_tree: the fewest GPUs per node above one that divide P, else
// one); for in-network reduction (collnet, collnet_chain, nvls_sharp) as many DGX A100 or H100 nodes on a
// SHARP switch.
std::optional<topo::Topology> world_for(const Algorithm& a, int world) {
  int per_node = 1;
  for (int g = world / 2; g >= 2; --g)
    if (world % g == 0 && world / g >= 2) per_node = g;
  for (topo::Topology t :
       {testing::flat_topology(world), testing::nvlink_domain_topology(world),
        topo::make_preset(fmt::format("dgx_h100:{},gpus={}", world / per_node, per_node)),
        topo::make_preset(fmt::format("dgx_a100:{},gpus={},sharp=1", world / per_node, per_node)),
        topo::make_preset(fmt::format("dgx_h100:{},gpus={},sharp=1", world / per_node, per_node))}) {
    if (a.supports(spec_for(t, a.collective, elements_of(a, 1, t), DType::F32), t, PlanOptions{}).ok)
      return t;
  }
  return std::nullopt;
}

TEST_P(PlannerMatrix, VerifiesAndComputesExactly) {
  const Algorithm& a = *GetParam().algorithm;
  const int world = GetParam().world;
  const std::optional<topo::Topology> world_topology = world_for(a, world);
  if (!world_topology)
    GTEST_SKIP() << a.name << " applies to no world of " << world << " (one rank, one node)";
  const topo::Topology& t = *world_topology;
  // Small chunks, so that even small counts are split into several pipeline chunks.
  PlanOptions options;
  options.chunk_bytes = 64;
  options.channels = 2;
  const std::uint64_t uneven = 13ULL * world + 5;  // not divisible by the world size (nor by the channels)
  for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, uneven}) {
    for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      const int root = world / 2;
      check(a, t, count, dtype, ReduceOp::Sum, root, options);
      if (HasFatalFailure()) return;
    }
  }
  for (ReduceOp op : {ReduceOp::Avg, ReduceOp::Min, ReduceOp::Max}) {
    check(a, t, uneven, DType::F32, op, world - 1, options);
    if (HasFatalFailure()) return;
  }
  // More than 1 Mi elements, with default chunking and channels; the largest worlds use the reference
  // executor with 64 threads, so keep them to f32.
  // (an alltoall's count is blocks: about 1 Mi elements in all, not per block)
  PlanOptions defaults;
  const std::uint64_t large = a.collective == Collective::AllToAll ? (1 << 20) / world + 1 : (1 << 20) + 3;
  check(a, t, large, DType::F32, ReduceOp::Sum, 0, defaults);
}

INSTANTIATE_TEST_SUITE_P(AllPlanners, PlannerMatrix, ::testing::ValuesIn(all_cases()), case_name);

// A world that is not a power of two has no hypercube: the registry says why before planning, and the planner
// refuses to build one (a partner r XOR 2^k beyond the last rank).
TEST(Planners, HypercubeRefusesOtherWorlds) {
  const Algorithm& a = require_algorithm(Collective::AllGather, "hypercube");
  for (int world : {3, 6, 12}) {
    const topo::Topology t = testing::flat_topology(world);
    const CollectiveSpec spec = spec_for(t, Collective::AllGather, 64, DType::F32);
    const Support support = a.supports(spec, t, PlanOptions{});
    EXPECT_FALSE(support.ok) << world;
    EXPECT_NE(support.reason.find("power-of-two world"), std::string::npos) << support.reason;
    EXPECT_THROW(a.plan(spec, t, PlanOptions{}), PlanError) << world;
  }
}

// Worlds derived from presets with 1..8 nodes: multi-GPU nodes, several NICs, other fabrics.
TEST(PresetWorlds, EveryAlgorithmOnEveryPreset) {
  const std::vector<std::string> presets = {"dgx_a100:{},sharp=1", "dgx_h100:{},fabric=rail",
                                            "pcie_server:{},gpus=4",
                                            "pcie_server:{},gpus=3,fabric=leaf_spine,leaf_size=2,oversub=2"};
  PlanOptions options;
  options.chunk_bytes = 256;
  for (const std::string& pattern : presets) {
    for (int nodes : {1, 2, 3, 5, 8}) {
      const topo::Topology t = topo::make_preset(fmt::format(fmt::runtime(pattern), nodes));
      const int world = static_cast<int>(t.gpus().size());
      for (const Algorithm& a : algorithms()) {
        // NVLS needs Hopper-or-later NVLink domains (tests/switch_ops_test.cpp says where it applies), PAT
        // one GPU per node, CollNet SHARP switches, as in NCCL, the hypercube a power-of-two world; every
        // other planner runs everywhere.
        const bool hardware_bound = a.name.starts_with("nvls") || a.name == "pat" ||
                                    a.name.starts_with("collnet") || a.name == "hypercube";
        if (hardware_bound && !a.supports(spec_for(t, a.collective, 1, DType::F32), t, options).ok) continue;
        check(a, t, 37ULL * world + 3, DType::F32, ReduceOp::Sum, world - 1, options);
        if (HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace cclab
