// The α-β model and the step count on the compact form equal the explicit walk: every planner, world sizes
// up to 64, chunked and unchunked, one to three channels, on flat worlds and on presets with several NICs,
// NVLink and oversubscribed fabrics (so that links differ and are shared); bytes sent per rank too.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "engine/ir/passes.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/model/cost.hpp"
#include "engine/plan/registry.hpp"
#include "tests/harness.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

void expect_same(const Algorithm& a, const topo::Topology& t, std::uint64_t count, const PlanOptions& o,
                 const CostParams& params) {
  if (a.collective == Collective::AllToAll) count *= t.gpus().size();  // P equal blocks of `count`
  const CollectiveSpec spec =
      spec_for(t, a.collective, count, DType::F32, ReduceOp::Sum, t.gpus().size() / 2);
  if (!a.supports(spec, t, o).ok) return;
  // NVLS and PAT have Simple kernels only: asking for LL or LL128 is refused (tests/switch_ops_test.cpp).
  if (params.protocol != Protocol::Auto &&
      !family_runs(algorithm_family(a.collective, a.name), params.protocol))
    return;
  const std::string what =
      fmt::format("{} {} on {}: count {} chunk {} channels {} inter {} reduce {}", to_string(a.collective),
                  a.name, t.name(), count, o.chunk_bytes, o.channels, o.inter, params.reduce_Bps);
  const std::string how = std::string(" protocol ") + std::string(to_string(params.protocol));
  const CompactSchedule s = a.compact(spec, t, o);
  const Schedule x = to_explicit(s);
  const RunResult want = estimate_cost(x, t, params), got = estimate_compact_cost(s, t, params);
  ASSERT_NEAR(got.total_s, want.total_s, 1e-9 * want.total_s) << what << how;
  ASSERT_EQ(got.rank_end_s.size(), want.rank_end_s.size()) << what;
  for (std::size_t r = 0; r < want.rank_end_s.size(); ++r)
    ASSERT_NEAR(got.rank_end_s[r], want.rank_end_s[r], 1e-9 * want.total_s) << what << ", rank " << r;
  ASSERT_EQ(got.bytes_sent, want.bytes_sent) << what;
  ASSERT_EQ(count_compact_steps(s), count_steps(x)) << what;
}

class CompactCost : public ::testing::TestWithParam<int> {};

TEST_P(CompactCost, EqualsTheExplicitWalkOnFlatWorlds) {
  const int world = GetParam();
  const topo::Topology t = testing::flat_topology(world);
  for (const Algorithm& a : algorithms()) {
    for (int channels : {1, 2, 3}) {
      for (std::uint64_t chunk : {std::uint64_t{0}, std::uint64_t{64}}) {
        PlanOptions o;
        o.channels = channels;
        o.chunk_bytes = chunk;
        for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{13} * world + 5}) {
          expect_same(a, t, count, o, CostParams{});
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Under each NCCL protocol (pipelined connections, step latencies, launch) too.
TEST_P(CompactCost, EqualsTheExplicitWalkUnderEveryProtocol) {
  const int world = GetParam();
  const topo::Topology t = testing::flat_topology(world);
  for (Protocol protocol : {Protocol::LL, Protocol::LL128, Protocol::Simple, Protocol::Auto}) {
    CostParams params;
    params.protocol = protocol;
    for (const Algorithm& a : algorithms()) {
      for (std::uint64_t chunk : {std::uint64_t{0}, std::uint64_t{64}}) {
        PlanOptions o;
        o.channels = 2;
        o.chunk_bytes = chunk;
        expect_same(a, t, 13ULL * world + 5, o, params);
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, CompactCost, ::testing::Values(1, 2, 3, 5, 8, 11, 16, 31, 64));

TEST(CompactCostPresets, EqualsTheExplicitWalkOnMultiNodeFabrics) {
  const std::vector<std::string> presets = {"dgx_a100:{}", "dgx_h100:{},fabric=rail", "pcie_server:{},gpus=4",
                                            "pcie_server:{},gpus=3,fabric=leaf_spine,leaf_size=2,oversub=2"};
  CostParams no_reduction;
  no_reduction.reduce_Bps = 0;
  for (const std::string& pattern : presets) {
    for (int nodes : {1, 2, 3, 5}) {
      const topo::Topology t = topo::make_preset(fmt::format(fmt::runtime(pattern), nodes));
      for (const Algorithm& a : algorithms()) {
        for (const char* inter : {"ring", "tree"}) {
          if (a.name != "hierarchical" && std::string(inter) == "tree") continue;
          PlanOptions o;
          o.chunk_bytes = 4096;
          o.inter = inter;
          const std::uint64_t count = 3000ULL * t.gpus().size() + 17;
          expect_same(a, t, count, o, CostParams{});
          if (HasFatalFailure()) return;
          expect_same(a, t, count, PlanOptions{.chunk_bytes = 1 << 20, .channels = 0, .inter = inter},
                      no_reduction);
          if (HasFatalFailure()) return;
          CostParams nccl = no_reduction;
          nccl.protocol = Protocol::Auto;
          expect_same(a, t, count, o, nccl);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// NVLSTree is walked one channel of each kind at a time (the same tree and parts: in an even split, channel c
// is channel c mod 2 again) and comes out as the walk of its whole expansion, under Simple (its protocol) and
// the raw model, on NVSwitch nodes over InfiniBand and RoCE.
TEST(CompactCostNvlsTree, WalksOneChannelOfEachKindAndEqualsTheWholeWalk) {
  const Algorithm& a = require_algorithm(Collective::AllReduce, "nvls_tree");
  for (const char* preset : {"dgx_h100:4", "dgx_h100:3,net=roce", "dgx_b200:2"}) {
    const topo::Topology t = topo::make_preset(preset);
    PlanOptions o;
    o.chunk_bytes = 1 << 18;
    const std::uint64_t count = std::uint64_t{1} << 22;  // 16 MiB: every channel's parts alike
    for (Protocol protocol : {Protocol::Raw, Protocol::Simple}) {
      CostParams params;
      params.protocol = protocol;
      // And counts that leave channels without a round (fewer elements than GPUs × channels).
      for (std::uint64_t n : {count, std::uint64_t{37}, std::uint64_t{7}}) {
        expect_same(a, t, n, o, params);
        if (HasFatalFailure()) return;
      }
    }
    const CompactSchedule s = a.compact(spec_for(t, Collective::AllReduce, count, DType::F32), t, o);
    const auto& nt = std::get<NvlsTreePass>(*s.phases()[0].lanes[0].pass);
    ASSERT_EQ(nt.channels(), 16) << preset;
    EXPECT_TRUE(nvls_tree_channels_alike(nt, 0, 2)) << preset;
    EXPECT_FALSE(nvls_tree_channels_alike(nt, 0, 1)) << preset;  // the two trees
    const std::uint64_t two = nvls_tree_channel_ops(nt, 0) + nvls_tree_channel_ops(nt, 1);
    EXPECT_EQ(nvls_tree_walked_ops(nt), two) << preset;
    EXPECT_EQ(estimate_cost_work(s).walked_ops, two) << preset;
    EXPECT_EQ(count_explicit_ops(s), 8 * two) << preset;
  }
}

// SHARP passes (collnet: direct messages inside nodes; collnet_chain: a chain; nvls_sharp: NVLS inside nodes)
// are walked one channel of each kind at a time (the same parts and rounds, and for chains the same chain:
// one in an even split) and come out as the walk of their whole expansion, on SHARP presets (a NIC per GPU,
// or two GPUs per NIC), several channels and counts that leave channels without a round; an odd GPU count per
// node makes uneven parts.
TEST(CompactCostSharp, WalksOneChannelOfEachKindAndEqualsTheWholeWalk) {
  for (const char* name : {"collnet", "collnet_chain", "nvls_sharp"}) {
    const Algorithm& a = require_algorithm(Collective::AllReduce, name);
    for (const char* preset :
         {"dgx_h100:3,sharp=1", "dgx_a100:2,sharp=1,nics=4", "dgx_h100:2,sharp=1,gpus=3"}) {
      const topo::Topology t = topo::make_preset(preset);
      for (int channels : {0, 3}) {
        PlanOptions o;
        o.chunk_bytes = 1 << 16;
        o.channels = channels;
        for (Protocol protocol : {Protocol::Raw, Protocol::Simple}) {
          CostParams params;
          params.protocol = protocol;
          for (std::uint64_t n :
               {std::uint64_t{1} << 20, std::uint64_t{1000003}, std::uint64_t{37}, std::uint64_t{5}}) {
            expect_same(a, t, n, o, params);
            if (HasFatalFailure()) return;
          }
        }
      }
      const std::uint64_t count = std::uint64_t{1} << 20;
      const CollectiveSpec spec = spec_for(t, Collective::AllReduce, count, DType::F32);
      if (!a.supports(spec, t, PlanOptions{}).ok) continue;  // nvls_sharp needs NVLS: Hopper
      const CompactSchedule s = a.compact(spec, t, PlanOptions{.chunk_bytes = 1 << 16});
      const auto& sp = std::get<SharpPass>(*s.phases()[0].lanes[0].pass);
      ASSERT_GE(sp.channels(), 2) << name << " " << preset;
      if (t.gpus().size() % 3 != 0 && sp.intra != SharpIntra::Chain) {  // parts even: channel 0 again
        EXPECT_TRUE(sharp_channels_alike(sp, 0, sp.channels() - 1)) << name << " " << preset;
        EXPECT_EQ(sharp_walked_ops(sp) * sp.nodes, sharp_channel_ops(sp, 0)) << name << " " << preset;
        EXPECT_EQ(count_explicit_ops(s), sp.channels() * sharp_channel_ops(sp, 0)) << name << " " << preset;
      }
      EXPECT_EQ(estimate_cost_work(s).walked_ops, sharp_walked_ops(sp)) << name << " " << preset;
      EXPECT_EQ(count_explicit_ops(s), to_explicit(s).num_ops()) << name << " " << preset;
    }
  }
}

// Where one node differs (a slower NIC link, or an NVLink port), the nodes are not alike and the SHARP walk
// takes them all; it still equals the walk of the whole expansion, and the slower node slows everyone.
TEST(CompactCostSharp, NodesThatDifferAreWalkedTogether) {
  for (const char* name : {"collnet", "collnet_chain", "nvls_sharp"}) {
    const Algorithm& a = require_algorithm(Collective::AllReduce, name);
    for (const topo::LinkKind kind : {topo::LinkKind::InfiniBand, topo::LinkKind::NvSwitch}) {
      topo::Topology t = topo::make_preset("dgx_h100:3,sharp=1");
      const topo::VertexId gpu = t.gpus().at(9);  // node 1
      std::size_t slow = t.links().size();
      for (std::size_t l = 0; l < t.links().size() && slow == t.links().size(); ++l)
        if (t.links()[l].kind == kind &&
            (kind == topo::LinkKind::NvSwitch
                 ? t.links()[l].a == gpu || t.links()[l].b == gpu
                 : t.vertex(t.links()[l].a).node == 1 || t.vertex(t.links()[l].b).node == 1))
          slow = l;
      ASSERT_LT(slow, t.links().size());
      const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 1 << 20, DType::F32);
      const PlanOptions o{.chunk_bytes = 1 << 16};
      const double uniform = estimate_compact_cost(a.compact(spec, t, o), t, CostParams{}).total_s;
      t.degrade_link(slow, 0.25, 0);
      expect_same(a, t, 1 << 20, o, CostParams{});
      if (HasFatalFailure()) return;
      EXPECT_GT(estimate_compact_cost(a.compact(spec, t, o), t, CostParams{}).total_s, uniform) << name;
    }
  }
}

// The work estimate that decides whether `cclab plan` costs by default counts a tree's channels of one shape
// once, as the recurrence times them: on DGX nodes the channels' trees are few shapes over shifted ranks.
TEST(CompactCostTree, WorkCountsEachShapeOfChannelOnce) {
  const topo::Topology t = topo::make_preset("dgx_h100:4");
  const Algorithm& a = require_algorithm(Collective::AllReduce, "tree");
  const CompactSchedule s = a.compact(spec_for(t, Collective::AllReduce, 1 << 24, DType::F32), t,
                                      PlanOptions{.chunk_bytes = 1 << 16});
  const auto& tree = std::get<TreePass>(*s.phases()[0].lanes[0].pass);
  const std::uint64_t per_channel = static_cast<std::uint64_t>(tree.members()) * tree.rounds();
  ASSERT_GE(tree.channels(), 4);
  const std::uint64_t cells = estimate_cost_work(s).tree_cells;
  EXPECT_EQ(cells % per_channel, 0u);
  EXPECT_GE(cells / per_channel, 1u);
  EXPECT_LT(cells / per_channel, static_cast<std::uint64_t>(tree.channels()));
}

// Equal blocks on multi-node presets: the recurrence skips whole periods of its steady state. Under NCCL's
// protocols the period is a node's worth of steps (a ring's slow inter-node hop travels around it), not one;
// the times still equal the explicit walk.
TEST(CompactCostPresets, PeriodicSteadyStatesEqualTheExplicitWalk) {
  for (const char* preset : {"dgx_h100:3", "dgx_h100:5,fabric=rail", "dgx1_v100:3"}) {
    const topo::Topology t = topo::make_preset(preset);
    for (Protocol protocol : {Protocol::Raw, Protocol::LL, Protocol::Simple}) {
      CostParams params;
      params.protocol = protocol;
      for (const char* name : {"ring", "hierarchical"}) {
        const Algorithm& a = require_algorithm(Collective::AllReduce, name);
        for (std::uint64_t chunk : {std::uint64_t{0}, std::uint64_t{4096}}) {
          PlanOptions o;
          o.chunk_bytes = chunk;
          expect_same(a, t, 4096ULL * t.gpus().size(), o, params);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Past CostParams::ring_exact_cells, a ring whose blocks differ by one element is timed with every block at
// the mean size. Times only grow with block sizes, so that time lies between the rings whose blocks are all
// the smaller and all the larger size (both exact: equal blocks), as the exact time does; they differ by
// well under a percent here.
TEST(CompactCostRing, MeanBlocksPastTheCellBudgetStayBetweenTheBounds) {
  const topo::Topology t = topo::make_preset("dgx_a100:4");
  const Algorithm& ring = require_algorithm(Collective::AllReduce, "ring");
  const std::uint64_t P = t.gpus().size(), q = 5000;
  for (std::uint64_t r : {std::uint64_t{1}, P / 2, P - 1}) {
    for (std::uint64_t chunk : {std::uint64_t{0}, std::uint64_t{4096}}) {
      const PlanOptions o{.chunk_bytes = chunk, .channels = 0, .inter = "ring"};
      auto time = [&](std::uint64_t count, std::uint64_t exact_cells) {
        CostParams params;
        params.ring_exact_cells = exact_cells;
        const CollectiveSpec spec = spec_for(t, Collective::AllReduce, count, DType::F32, ReduceOp::Sum, 0);
        return estimate_compact_cost(ring.compact(spec, t, o), t, params).total_s;
      };
      const double exact = time(q * P + r, CostParams{}.ring_exact_cells);
      const double mean = time(q * P + r, 0);
      const double low = time(q * P, 0), high = time((q + 1) * P, 0);
      EXPECT_NE(mean, exact) << "r " << r << " chunk " << chunk;  // the mean-size mode did run
      EXPECT_LE(low, mean);
      EXPECT_LE(mean, high);
      EXPECT_LE(low, exact);
      EXPECT_LE(exact, high);
      EXPECT_LT(std::abs(mean - exact), 0.01 * exact);
    }
  }
}

}  // namespace
}  // namespace cclab
