// Switch ops (in-switch reduction and multicast): the IR's rules for them as the verifier enforces them,
// their JSON form, and NVLS allreduce on the α-β model (where it applies, what it costs against the port's
// bytes).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "common/error.hpp"
#include "engine/check/verifier.hpp"
#include "engine/ir/progress.hpp"
#include "engine/ir/schedule_json.hpp"
#include "engine/model/cost.hpp"
#include "engine/model/switch_ports.hpp"
#include "engine/plan/nvls_allreduce.hpp"
#include "engine/plan/registry.hpp"
#include "engine/plan/selection.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

Schedule nvls(int world, std::uint64_t count, int channels = 1, std::uint64_t chunk_elems = 0) {
  return to_explicit(planners::nvls_allreduce(
      CollectiveSpec{Collective::AllReduce, count, DType::F32, ReduceOp::Sum, 0, world}, channels,
      chunk_elems));
}

std::string error_of(const Schedule& s) {
  const auto e = verify(s);
  return e ? *e : std::string("(verifies)");
}

TEST(SwitchOps, NvlsVerifiesInAndOutOfPlace) {
  for (int world : {2, 3, 5, 8})
    for (std::uint64_t count : {0, 1, 7, 1001})
      EXPECT_EQ(error_of(nvls(world, count, 3, 4)), "(verifies)") << "P=" << world << " count " << count;
}

TEST(SwitchOps, StoreBeforeItsReduceCompletesIsARace) {
  Schedule s = nvls(4, 64);
  // Rank 1's store no longer waits for its reduce: it may read its slice before the sum lands.
  s.ranks[1].ops[1].deps_count = 0;
  EXPECT_NE(error_of(s).find("race"), std::string::npos) << error_of(s);
}

TEST(SwitchOps, AMemberWithFewerOpsIsRejected) {
  Schedule s = nvls(4, 64);
  s.ranks[2].ops.pop_back();
  EXPECT_NE(error_of(s).find("switch ops of this group"), std::string::npos) << error_of(s);
}

TEST(SwitchOps, InstancesMustAgreeOnTheKind) {
  Schedule s = nvls(4, 64);
  s.ranks[3].ops[0].kind = OpKind::SwitchStore;
  EXPECT_NE(error_of(s).find("is switch op 0 of its group"), std::string::npos) << error_of(s);
}

TEST(SwitchOps, TheGroupMustBeAMember) {
  Schedule s = nvls(3, 64);
  for (int r : {1, 2})
    for (Op& op : s.ranks[r].ops)
      op.channel = 1;  // ranks 1 and 2 now form group (0, channel 1) without rank 0
  EXPECT_NE(error_of(s).find("rank 0 has no switch op on channel 1"), std::string::npos) << error_of(s);
  Schedule t = nvls(3, 64);
  t.ranks[0].ops[0].peer = 7;
  EXPECT_NE(error_of(t).find("group 7 is not a rank"), std::string::npos) << error_of(t);
}

TEST(SwitchOps, AStoreToTheWrongPlaceFailsThePostcondition) {
  Schedule s = nvls(4, 64);
  // Rank 2 multicasts its slice over rank 3's: no member ever receives slice 2.
  s.ranks[2].ops[1].dst = s.ranks[3].ops[1].dst;
  s.ranks[2].ops[1].src = s.ranks[2].ops[1].dst;
  EXPECT_NE(error_of(s).find("output["), std::string::npos) << error_of(s);
}

TEST(SwitchOps, RemoteChunksMustFitEveryMember) {
  // Reduce-scatter outputs differ in size by rank: a switch op's chunk must lie inside every member's buffer.
  Schedule s = nvls(4, 64);
  s.ranks[0].ops[0].src.offset = 60;
  s.ranks[0].ops[0].dst.offset = 60;
  s.ranks[0].ops[0].src.count = s.ranks[0].ops[0].dst.count = 16;  // [60, 76) in 64-element buffers
  EXPECT_NE(error_of(s).find("outside"), std::string::npos) << error_of(s);
}

// The header's formula: each rank sends S + S/P up to the switch (exact when P divides the count).
TEST(SwitchOps, NvlsSendsItsPortBytes) {
  for (int world : {2, 4, 8}) {
    const std::uint64_t count = 96 * 1024;
    const Schedule s = nvls(world, count, 4, 1024);
    const std::uint64_t S = count * 4;
    for (std::uint64_t bytes : bytes_sent_per_rank(s))
      EXPECT_EQ(bytes, S + S / world) << "P=" << world;
  }
}

TEST(SwitchOps, JsonRoundTrip) {
  const Schedule s = nvls(5, 77, 2, 3);
  const Schedule back = schedule_from_json(schedule_to_json(s));
  ASSERT_EQ(back.ranks.size(), s.ranks.size());
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    ASSERT_EQ(back.ranks[r].ops.size(), s.ranks[r].ops.size());
    for (OpId i = 0; i < s.ranks[r].ops.size(); ++i) {
      EXPECT_EQ(back.ranks[r].ops[i].kind, s.ranks[r].ops[i].kind);
      EXPECT_EQ(back.ranks[r].ops[i].peer, s.ranks[r].ops[i].peer);
      EXPECT_EQ(back.ranks[r].ops[i].src, s.ranks[r].ops[i].src);
      EXPECT_EQ(back.ranks[r].ops[i].dst, s.ranks[r].ops[i].dst);
    }
  }
  EXPECT_EQ(error_of(back), "(verifies)");
}

// Whether the allreduce `algorithm` applies on a preset.
Support allreduce_support(const std::string& algorithm, const std::string& preset) {
  const topo::Topology t = topo::make_preset(preset);
  return require_algorithm(Collective::AllReduce, algorithm)
      .supports(spec_for(t, Collective::AllReduce, 1 << 20, DType::F32), t, PlanOptions{});
}

TEST(Nvls, AppliesInsideOneHopperOrBlackwellNvlinkDomainOnly) {
  auto support = [](const std::string& preset) { return allreduce_support("nvls", preset); };
  EXPECT_TRUE(support("dgx_h100:1").ok) << support("dgx_h100:1").reason;
  EXPECT_TRUE(support("dgx_b200:1").ok) << support("dgx_b200:1").reason;
  EXPECT_FALSE(support("dgx_a100:1").ok);
  EXPECT_NE(support("dgx_a100:1").reason.find("Hopper"), std::string::npos);
  EXPECT_FALSE(support("dgx_h100:2").ok);
  EXPECT_NE(support("dgx_h100:2").reason.find("nvls_tree"), std::string::npos);
  EXPECT_FALSE(support("pcie_server:1,gpus=4").ok);
}

TEST(Nvls, ReduceScatterAndAllgatherThroughTheSwitch) {
  const topo::Topology t = topo::make_preset("dgx_h100:1");
  for (Collective c : {Collective::ReduceScatter, Collective::AllGather}) {
    const Algorithm& a = require_algorithm(c, "nvls");
    const CollectiveSpec spec = spec_for(t, c, 8 * 4096, DType::F32);
    ASSERT_TRUE(a.supports(spec, t, PlanOptions{}).ok);
    const Schedule s = a.plan(spec, t, PlanOptions{});
    EXPECT_EQ(error_of(s), "(verifies)");
    // Up the port: a reduce-scatter sends the member's copy of the whole vector, an allgather its block.
    const std::uint64_t S = spec.count * 4;
    for (std::uint64_t bytes : bytes_sent_per_rank(s))
      EXPECT_EQ(bytes, c == Collective::ReduceScatter ? S : S / 8) << to_string(c);
  }
}

// NCCL gives each NVLS head its chunk (128 KiB) per step whatever the domain's size, and opens 16 NVLS
// channels on Hopper and 24 in one Blackwell NVLink domain (src/transport/nvls.cc). A round of 1 MiB on every
// domain shrank a member's share with the domain: 14.5 KiB on an NVL72 rack, below NCCL's smallest chunk, and
// nine times the switch instances to plan, cost and verify.
TEST(Nvls, EachMemberMovesNcclsChunkPerRound) {
  // The longest SwitchReduce of a plan, in elements, and its channel count.
  auto shape = [](const std::string& preset, std::uint64_t bytes, PlanOptions options = {}) {
    const topo::Topology t = topo::make_preset(preset);
    const CollectiveSpec spec = spec_for(t, Collective::AllReduce, bytes / 4, DType::F32);
    const Schedule s = require_algorithm(Collective::AllReduce, "nvls").plan(spec, t, options);
    std::uint64_t longest = 0;
    int channels = 0;
    for (const Program& p : s.ranks)
      for (const Op& op : p.ops)
        if (op.kind == OpKind::SwitchReduce) {
          longest = std::max(longest, op.src.count);
          channels = std::max(channels, static_cast<int>(op.channel) + 1);
        }
    return std::pair{longest, channels};
  };
  const std::uint64_t nccl_chunk = (128 << 10) / 4;
  EXPECT_EQ(shape("dgx_h100:1", 256 << 20), std::pair(nccl_chunk, 16));
  EXPECT_EQ(shape("dgx_h100:1,gpus=4", 256 << 20), std::pair(nccl_chunk, 16));
  EXPECT_EQ(shape("dgx_b200:1", 256 << 20), std::pair(nccl_chunk, 24));
  EXPECT_EQ(shape("gb200_nvl72:1", 256 << 20), std::pair(nccl_chunk, 24));
  // A smaller pipeline chunk is each member's share; a larger one does not raise NCCL's; 0 is one round.
  EXPECT_EQ(shape("gb200_nvl72:1", 256 << 20, {.chunk_bytes = 16 << 10}).first, (16u << 10) / 4);
  EXPECT_EQ(shape("dgx_h100:1", 256 << 20, {.chunk_bytes = 64 << 20}).first, nccl_chunk);
  const auto unchunked = shape("dgx_h100:1", 256 << 20, {.chunk_bytes = 0, .channels = 2});
  EXPECT_EQ(unchunked.first, (256u << 20) / 4 / 8 / 2);
  EXPECT_EQ(unchunked.second, 2);
}

TEST(Nvls, TreeAcrossNodesOnlyWithNvlinkDomainsInEveryNode) {
  const Algorithm& a = require_algorithm(Collective::AllReduce, "nvls_tree");
  auto support = [](const std::string& preset) { return allreduce_support("nvls_tree", preset); };
  EXPECT_TRUE(support("dgx_h100:2").ok) << support("dgx_h100:2").reason;
  EXPECT_FALSE(support("dgx_h100:1").ok);  // NCCL turns NVLSTree off on one node; nvls runs it
  EXPECT_FALSE(support("dgx_a100:2").ok);
  const topo::Topology t = topo::make_preset("dgx_h100:2");
  const Schedule s = a.plan(spec_for(t, Collective::AllReduce, 4096 + 3, DType::F32), t, PlanOptions{});
  EXPECT_EQ(error_of(s), "(verifies)");
  // Two switch groups, one per node, never one spanning both.
  Matching matching;
  ASSERT_FALSE(check_structure(s, matching));
  ASSERT_FALSE(matching.instances.empty());
  for (const auto& instance : matching.instances) {
    EXPECT_EQ(instance.size(), 8u);
    for (const OpRef& m : instance)
      EXPECT_EQ(t.node_of_rank(m.rank), t.node_of_rank(instance[0].rank));
  }
}

// On one DGX H100, a large NVLS allreduce is its port's bytes, S(1 + 1/P) each way, over the port's
// bandwidth times nvlsEfficiency, after NCCL's 25 µs: the ring moves 2(P-1)/P·S through the same port, so
// NVLS wins at large sizes and the ring's cheaper launch wins at small ones, as NCCL's tuner chooses.
TEST(Nvls, CostsThePortBytesAndBeatsTheRingOnlyWhenLarge) {
  const topo::Topology t = topo::make_preset("dgx_h100:1");
  const int P = static_cast<int>(t.gpus().size());
  const Algorithm& nvls_algo = require_algorithm(Collective::AllReduce, "nvls");
  const Algorithm& ring = require_algorithm(Collective::AllReduce, "ring");
  CostParams params;
  params.protocol = Protocol::Auto;
  auto time_of = [&](const Algorithm& a, std::uint64_t bytes) {
    const CollectiveSpec spec = spec_for(t, Collective::AllReduce, bytes / 4, DType::F32);
    return estimate_cost(a.plan(spec, t, PlanOptions{}), t, params).total_s;
  };
  const double S = 1 << 30;
  const std::size_t port = topo::nvswitch_port(t, t.gpus()[0])->link;
  const double bandwidth = t.effective_bandwidth_Bps(port) * nvls_efficiency(topo::GpuArch::Hopper);
  const double expected = 25e-6 + S * (1.0 + 1.0 / P) / bandwidth;
  const double large = time_of(nvls_algo, 1 << 30);
  EXPECT_NEAR(large / expected, 1.0, 0.03) << large << " s vs " << expected << " s";
  EXPECT_LT(large * 1.2, time_of(ring, 1 << 30));
  EXPECT_GT(time_of(nvls_algo, 8 << 10), time_of(ring, 8 << 10));
}

// NVLSTree on two DGX H100 nodes: its stages pipeline, so a large allreduce takes about what its NVSwitch
// port takes, S(1 + 1/g) each way, not the sum of an in-node reduce, a tree and an in-node multicast (that
// was the phased plan: 10.1 ms at 1 GiB, against the ring's 5.5); it beats the ring there, and each rank
// sends what the header says: S + S/g up to its switch and, with two nodes, S/g on the network.
TEST(Nvls, TreeAcrossNodesPipelinesItsStages) {
  const topo::Topology t = topo::make_preset("dgx_h100:2");
  const int g = 8;
  const Algorithm& nvls_tree = require_algorithm(Collective::AllReduce, "nvls_tree");
  const Algorithm& ring = require_algorithm(Collective::AllReduce, "ring");
  CostParams params;
  params.protocol = Protocol::Auto;
  const std::uint64_t count = std::uint64_t{1} << 28;  // 1 GiB of f32
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, count, DType::F32);
  const Schedule s = nvls_tree.plan(spec, t, PlanOptions{});
  const double S = static_cast<double>(count) * 4;
  const std::size_t port = topo::nvswitch_port(t, t.gpus()[0])->link;
  const double port_s =
      25e-6 +
      S * (1.0 + 1.0 / g) / (t.effective_bandwidth_Bps(port) * nvls_efficiency(topo::GpuArch::Hopper));
  const double time = estimate_cost(s, t, params).total_s;
  EXPECT_GE(time, port_s);
  EXPECT_LT(time, 1.2 * port_s) << time << " s vs the port's " << port_s << " s";
  EXPECT_LT(time * 1.1, estimate_cost(ring.plan(spec, t, PlanOptions{}), t, params).total_s);
  for (std::uint64_t bytes : bytes_sent_per_rank(s))
    EXPECT_EQ(bytes, static_cast<std::uint64_t>(S + S / g + S / g));
}

// NVLSTree's reduce and multicast are streams of their own, as NCCL's separate warps: a member's reduce of
// round k waits for its previous reduce and for its tree to have taken round k - kPostAhead - 1 up, never for
// a multicast, so the rounds' way back down cannot hold the reduces back. (On one IR channel the reduce of
// round k + kPostAhead was issued after round k's multicast, and a deep tree's round trip set the pace: 64
// nodes of 8 x H200 over RoCE, 1 GiB, 289 GB/s of busbw; 358 as separate streams.)
TEST(Nvls, TreeReducesWaitForTheWayUpOnly) {
  const topo::Topology t = topo::make_preset("dgx_h100:4");
  const Algorithm& nvls_tree = require_algorithm(Collective::AllReduce, "nvls_tree");
  const Schedule s = nvls_tree.plan(spec_for(t, Collective::AllReduce, std::uint64_t{64} << 20, DType::F32),
                                    t, PlanOptions{});
  int held_by_the_tree = 0;
  for (const Program& p : s.ranks) {
    std::set<int> reduce_channels, store_channels;
    for (const Op& op : p.ops) {
      if (op.kind == OpKind::SwitchStore) store_channels.insert(op.channel);
      if (op.kind != OpKind::SwitchReduce) continue;
      reduce_channels.insert(op.channel);
      for (const OpId d : p.deps_of(op)) {
        const OpKind kind = p.ops[d].kind;
        EXPECT_NE(kind, OpKind::SwitchStore);
        if (kind == OpKind::Send || kind == OpKind::LocalReduce) ++held_by_the_tree;
      }
    }
    for (const int c : reduce_channels)
      EXPECT_FALSE(store_channels.contains(c)) << "reduce and multicast share IR channel " << c;
  }
  EXPECT_GT(held_by_the_tree, 0);
}

// auto costs nvls_tree where the channels its cost walk expands are small enough (one channel of each tree at
// a time: 128 DGX H100 nodes at 1 GiB, about 0.9 M ops, where the whole plan has 7 M), and lists it with its
// size where not (1,024 nodes: about 7 M ops walked), choosing among the rest.
TEST(Nvls, AutoLeavesOutTreePlansTooLargeToWalk) {
  CostParams cost;
  cost.protocol = Protocol::Auto;
  const topo::Topology two = topo::make_preset("dgx_h100:2");
  const CollectiveSpec small_spec = spec_for(two, Collective::AllReduce, std::uint64_t{1} << 28, DType::F32);
  Selector selector(cost);
  EXPECT_EQ(selector.choose(small_spec, two, "auto").algorithm, "nvls_tree");
  const Algorithm& nvls_tree = require_algorithm(Collective::AllReduce, "nvls_tree");
  auto row_of = [&](Selector& s, const CollectiveSpec& spec, const topo::Topology& t) {
    for (const Candidate& row : s.auto_table(spec, t))
      if (row.algorithm == "nvls_tree") return row;
    ADD_FAILURE() << "nvls_tree is not listed";
    return Candidate{};
  };
  const topo::Topology scale = topo::make_preset("dgx_h100:128");
  const CollectiveSpec at_scale = spec_for(scale, Collective::AllReduce, std::uint64_t{1} << 28, DType::F32);
  EXPECT_LT(nvls_tree.unplanned_ops(at_scale, scale, PlanOptions{}), kAutoMaxExplicitOps);
  const Candidate costed = row_of(selector, at_scale, scale);
  EXPECT_TRUE(costed.support.ok) << costed.support.reason;
  EXPECT_GT(costed.time_s, 0);

  const topo::Topology large = topo::make_preset("dgx_h100:1024");
  const CollectiveSpec spec = spec_for(large, Collective::AllReduce, std::uint64_t{1} << 28, DType::F32);
  EXPECT_GT(nvls_tree.unplanned_ops(spec, large, PlanOptions{}), kAutoMaxExplicitOps);
  const Candidate row = row_of(selector, spec, large);
  EXPECT_FALSE(row.support.ok);
  EXPECT_NE(row.support.reason.find("not costed by auto"), std::string::npos) << row.support.reason;
  EXPECT_NE(row.support.reason.find("--algo nvls_tree"), std::string::npos) << row.support.reason;
  EXPECT_NE(selector.choose(spec, large, "auto").algorithm, "nvls_tree");
}

TEST(Nvls, RunsUnderSimpleOnly) {
  const topo::Topology t = topo::make_preset("dgx_h100:1");
  const Schedule s = require_algorithm(Collective::AllReduce, "nvls")
                         .plan(spec_for(t, Collective::AllReduce, 1024, DType::F32), t, {});
  CostParams params;
  params.protocol = Protocol::LL;
  try {
    estimate_cost(s, t, params);
    FAIL() << "LL was costed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("simple only"), std::string::npos) << e.what();
  }
}

// CollNet (SHARP): across nodes whose NICs hang off SHARP switches, never inside one node or without SHARP.
TEST(CollNet, AppliesAcrossNodesOnSharpSwitchesOnly) {
  auto support = [](const std::string& preset) { return allreduce_support("collnet", preset); };
  EXPECT_TRUE(support("dgx_a100:2,sharp=1").ok) << support("dgx_a100:2,sharp=1").reason;
  EXPECT_TRUE(support("dgx_h100:4,fabric=leaf_spine,sharp=1").ok);
  EXPECT_FALSE(support("dgx_a100:2").ok);
  EXPECT_NE(support("dgx_a100:2").reason.find("SHARP"), std::string::npos) << support("dgx_a100:2").reason;
  EXPECT_FALSE(support("dgx_a100:1,sharp=1").ok);
  EXPECT_THROW(topo::make_preset("pcie_server:2,sharp=1"), ConfigError);  // RoCE: SHARP is InfiniBand's
}

// Each SHARP instance has one member per node, all naming the same range (the IR's in-network reduce), and
// a GPU sends S/g up to the network, half what a ring sends through its NIC (2(P-1)/P·S/g).
TEST(CollNet, ReducesOneRangePerNodeAndHalvesTheNicBytes) {
  const topo::Topology t = topo::make_preset("dgx_a100:4,sharp=1");
  const int g = 8, P = 32;
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 8 * 4096, DType::F32);
  const Schedule s = require_algorithm(Collective::AllReduce, "collnet").plan(spec, t, PlanOptions{});
  EXPECT_EQ(error_of(s), "(verifies)");
  Matching matching;
  ASSERT_FALSE(check_structure(s, matching));
  ASSERT_FALSE(matching.instances.empty());
  for (const auto& instance : matching.instances) {
    ASSERT_EQ(instance.size(), 4u);
    std::set<int> nodes;
    for (const OpRef& m : instance) {
      nodes.insert(t.node_of_rank(m.rank));
      EXPECT_EQ(s.ranks[m.rank].ops[m.op].src, s.ranks[instance[0].rank].ops[instance[0].op].src);
    }
    EXPECT_EQ(nodes.size(), 4u);
  }
  const std::uint64_t S = spec.count * 4;
  for (std::uint64_t bytes : switch_bytes_sent_per_rank(s))
    EXPECT_EQ(bytes, S / g);
  const Schedule ring = require_algorithm(Collective::AllReduce, "ring").plan(spec, t, PlanOptions{});
  std::uint64_t ring_network = 0;
  for (int r = 0; r < P; ++r)
    for (const Op& op : ring.ranks[r].ops)
      if (op.kind == OpKind::Send && t.node_of_rank(op.peer) != t.node_of_rank(r))
        ring_network += op.src.count * 4;
  // The ring's network bytes per GPU: 2(P-1)/P·S/g, spread over the channels' entries.
  EXPECT_NEAR(static_cast<double>(ring_network) / P, 2.0 * (P - 1) / P * S / g, 0.01 * S / g);
}

// A large CollNet allreduce costs what its busiest stream needs: each GPU sends 2(g-1)/g·S to its peers
// over its NVSwitch port and S/g through its NIC; on a DGX A100 the port binds, and it beats the ring, whose
// NICs carry twice the bytes; a small one pays one SHARP trip (31 µs) instead of the ring's 2(P-1) steps.
TEST(CollNet, CostsItsBusiestStreamAndBeatsTheRingAcrossNodes) {
  const topo::Topology t = topo::make_preset("dgx_a100:4,sharp=1");
  const int g = 8;
  CostParams params;
  params.protocol = Protocol::Auto;
  auto time = [&](const char* algorithm, std::uint64_t count) {
    const CollectiveSpec spec = spec_for(t, Collective::AllReduce, count, DType::F32);
    return estimate_cost(require_algorithm(Collective::AllReduce, algorithm).plan(spec, t, PlanOptions{}), t,
                         params)
        .total_s;
  };
  const std::uint64_t count = std::uint64_t{1} << 28;  // 1 GiB of f32
  const double S = static_cast<double>(count) * 4;
  const std::size_t port = topo::nvswitch_port(t, t.gpus()[0])->link;
  const std::size_t nic = topo::sharp_port(t, t.gpus()[0])->link;
  const double floor_s = std::max(2.0 * (g - 1) / g * S / t.effective_bandwidth_Bps(port),
                                  S / g / t.effective_bandwidth_Bps(nic));
  const double collnet = time("collnet", count);
  EXPECT_GE(collnet, floor_s);
  EXPECT_LT(collnet, 1.15 * floor_s) << collnet << " s vs the busiest stream's " << floor_s << " s";
  EXPECT_LT(collnet * 1.2, time("ring", count));
  const double small = time("collnet", 1024);
  EXPECT_GT(small, kSharpTripLatency_s);
  EXPECT_LT(small * 2, time("ring", 1024));
}

// NVLS with SHARP across nodes: NVLS groups inside each node, SHARP groups of one GPU per node, never one
// channel for both; each rank sends S + S/g through its NVSwitch port (as nvls) and S/g to the network.
TEST(NvlsSharp, ReducesInTheNodeAndInTheNetwork) {
  auto support = [](const std::string& preset) { return allreduce_support("nvls_sharp", preset); };
  EXPECT_TRUE(support("dgx_h100:2,sharp=1").ok) << support("dgx_h100:2,sharp=1").reason;
  EXPECT_FALSE(support("dgx_h100:2").ok);          // no SHARP
  EXPECT_FALSE(support("dgx_a100:2,sharp=1").ok);  // no NVLS
  const topo::Topology t = topo::make_preset("dgx_h100:2,sharp=1");
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 16 * 4096, DType::F32);
  const Schedule s = require_algorithm(Collective::AllReduce, "nvls_sharp").plan(spec, t, PlanOptions{});
  EXPECT_EQ(error_of(s), "(verifies)");
  Matching matching;
  ASSERT_FALSE(check_structure(s, matching));
  std::set<int> node_channels, network_channels;
  for (const auto& instance : matching.instances) {
    const int channel = s.ranks[instance[0].rank].ops[instance[0].op].channel;
    if (instance.size() == 8u) {
      for (const OpRef& m : instance)
        EXPECT_EQ(t.node_of_rank(m.rank), t.node_of_rank(instance[0].rank));
      node_channels.insert(channel);
    } else {
      ASSERT_EQ(instance.size(), 2u);
      EXPECT_NE(t.node_of_rank(instance[0].rank), t.node_of_rank(instance[1].rank));
      network_channels.insert(channel);
    }
  }
  EXPECT_FALSE(node_channels.empty());
  EXPECT_FALSE(network_channels.empty());
  for (const int c : node_channels)
    EXPECT_FALSE(network_channels.contains(c)) << "channel " << c;
  const std::uint64_t S = spec.count * 4;
  for (std::uint64_t bytes : switch_bytes_sent_per_rank(s))
    EXPECT_EQ(bytes, S + S / 8 + S / 8);
}

}  // namespace
}  // namespace cclab
