// Scenario files: sweeps expand in document order, every field is checked, and every error names file, line
// and field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "common/error.hpp"
#include "engine/whatif/predict.hpp"
#include "engine/whatif/scenario.hpp"
#include "engine/whatif/step_model.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

const char* const kBase = R"(name: t
topology:
  preset: dgx_a100
  nodes: [1, 2]
workload: resnet50
compute:
  gpu: a100
communication:
  algorithm: [ring, tree, auto]
)";

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, "s.yaml", "", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Scenario, SweepsExpandInDocumentOrderFirstListSlowest) {
  const Scenario s = parse_scenario(kBase, "s.yaml", "");
  ASSERT_EQ(s.points.size(), 6u);
  EXPECT_EQ(s.swept_fields, (std::vector<std::string>{"nodes", "algorithm"}));
  EXPECT_EQ(s.points[0].label(), "nodes=1 algorithm=ring");
  EXPECT_EQ(s.points[2].label(), "nodes=1 algorithm=auto");
  EXPECT_EQ(s.points[3].label(), "nodes=2 algorithm=ring");
  EXPECT_EQ(s.points[0].gpus(), 8);
  EXPECT_EQ(s.points[5].gpus(), 16);
  EXPECT_EQ(s.points[4].algorithm, "tree");
  // Points with the same topology share one built graph.
  EXPECT_EQ(s.points[0].topology.get(), s.points[1].topology.get());
  EXPECT_NE(s.points[0].topology.get(), s.points[3].topology.get());
  EXPECT_EQ(s.points[0].compute_source, "defaults for a100");
}

TEST(Scenario, AnyScalarFieldSweeps) {
  const Scenario s = parse_scenario(std::string(kBase) + R"(  bucket: [1MiB, 64MiB]
  fp16: [false, true]
)",
                                    "s.yaml", "", {"topology.nic=[100Gbps, 200Gbps]"});
  EXPECT_EQ(s.points.size(), 2u * 3 * 2 * 2 * 2);
  std::set<std::uint64_t> buckets;
  std::set<std::string> topologies;
  for (const ScenarioPoint& p : s.points) {
    buckets.insert(p.fusion.threshold_bytes);
    topologies.insert(p.topology_spec);
  }
  EXPECT_EQ(buckets, (std::set<std::uint64_t>{1ULL << 20, 64ULL << 20}));
  EXPECT_EQ(topologies.size(), 4u);  // 2 node counts x 2 NIC speeds
  EXPECT_TRUE(topologies.count("dgx_a100:2,nic=100Gbps"));
  // Overrides join the document where they belong (nic in topology), so they label in document order.
  EXPECT_EQ(s.points.back().label(), "nodes=2 nic=200Gbps algorithm=auto bucket=64MiB fp16=true");
}

TEST(Scenario, ExplicitComputeHorovodAndZero) {
  const Scenario s = parse_scenario(R"(name: x
topology: {preset: pcie_server, nodes: 2, gpus: 2}
workload: gpt:layers=2,hidden=256,vocab=1000,seq=128
compute: {forward: 10ms, backward: 20ms, optimizer: 1ms, batch: 8}
communication: {fusion: horovod, cycle: 5ms, sync: zero, chunk: 256KiB, channels: 2}
backend: sim
)",
                                    "x.yaml", "");
  ASSERT_EQ(s.points.size(), 1u);
  const ScenarioPoint& p = s.points[0];
  EXPECT_EQ(p.gpus(), 4);
  EXPECT_DOUBLE_EQ(p.compute.backward_s, 0.02);
  EXPECT_EQ(p.compute.batch_per_gpu, 8);
  EXPECT_EQ(p.fusion.style, FusionStyle::HorovodCycle);
  EXPECT_EQ(p.fusion.threshold_bytes, 128ULL << 20);  // Horovod's default threshold
  EXPECT_DOUBLE_EQ(p.fusion.cycle_s, 0.005);
  EXPECT_EQ(p.sync, GradientSync::ZeroSharded);
  EXPECT_EQ(p.plan.chunk_bytes, 256u << 10);
  EXPECT_EQ(p.plan.channels, 2);
  EXPECT_EQ(p.backend, TimeBackend::Sim);
  EXPECT_EQ(p.algorithm, "auto");
  // Unset: the machine balance comes from the topology's GPU at predict time; no overhead, no floor.
  EXPECT_EQ(p.compute.flops_per_byte, 0);
  EXPECT_EQ(p.compute.bucket_overhead_s, 0);
  EXPECT_EQ(p.compute.input_floor_s, 0);
}

TEST(Scenario, StepRealismFieldsAreSettable) {
  const Scenario s = parse_scenario(R"(name: x
topology: {preset: dgx_a100, nodes: 1}
workload: resnet50
compute: {gpu: a100, flops_per_byte: 300, bucket_overhead: 40us, input_floor: [50ms, 200ms]}
communication: {algorithm: ring}
)",
                                    "x.yaml", "");
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_DOUBLE_EQ(s.points[0].compute.flops_per_byte, 300);
  EXPECT_DOUBLE_EQ(s.points[0].compute.bucket_overhead_s, 40e-6);
  EXPECT_DOUBLE_EQ(s.points[1].compute.input_floor_s, 0.2);
  EXPECT_THROW(parse_scenario("name: x\ntopology: {preset: dgx_a100, nodes: 1}\nworkload: resnet50\n"
                              "compute: {gpu: a100, flops_per_byte: 0}\n",
                              "x.yaml", ""),
               ConfigError);
  // Hierarchical's inter-node algorithm, swept like any field; anything but ring or tree is refused.
  const Scenario inter = parse_scenario(std::string(kBase) + "  inter: [ring, tree]\n", "s.yaml", "");
  EXPECT_EQ(inter.points.front().plan.inter, "ring");
  EXPECT_EQ(inter.points.back().plan.inter, "tree");
  EXPECT_THROW(parse_scenario(std::string(kBase) + "  inter: butterfly\n", "s.yaml", ""), ConfigError);
}

// GPUs of one SKU differ (kGpuVariation, Sinha et al. SC'22): a scenario that leaves compute.jitter unset is
// predicted with it, the same to the bit as one that sets it, and slower than one that sets 0 — by more on
// more GPUs, the slowest of P being slower.
TEST(Scenario, GpusVaryByDefault) {
  const auto scenario_with = [](const std::string& jitter) {
    return parse_scenario(
        "name: v\ntopology: {preset: dgx_a100, nodes: [1, 16]}\nworkload: resnet50\n"
        "compute: {gpu: a100" +
            jitter + "}\ncommunication: {algorithm: ring}\n",
        "v.yaml", "");
  };
  const Scenario unset = scenario_with(""), set = scenario_with(", jitter: 0.015"),
                 none = scenario_with(", jitter: 0");
  EXPECT_LT(unset.points.at(0).compute.jitter, 0);  // resolved by predict, not by the parser
  const std::vector<PointResult> by_default = predict_scenario(unset), given = predict_scenario(set),
                                 without = predict_scenario(none);
  ASSERT_EQ(by_default.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(by_default[i].prediction.step_s, given[i].prediction.step_s);
    EXPECT_GT(by_default[i].prediction.step_s, without[i].prediction.step_s);
  }
  const double loss8 = without[0].prediction.efficiency - by_default[0].prediction.efficiency;
  const double loss128 = without[1].prediction.efficiency - by_default[1].prediction.efficiency;
  EXPECT_GT(loss128, loss8);
  // With the network hidden behind backward the loss is the expected slowest of 8 draws.
  EXPECT_NEAR(without[0].prediction.step_s / by_default[0].prediction.step_s,
              1 / (1 + kGpuVariation * expected_max_of_normals(8)), 2e-3);
}

TEST(Scenario, FilesResolveAgainstTheScenarioDirectory) {
  const std::string dir = ::testing::TempDir() + "scenario_files";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/grads.csv") << "a,1000\nb,3000\n";
  std::ofstream(dir + "/s.yaml") << "name: f\ntopology: {preset: dgx_a100, nodes: 1}\nworkload: grads.csv\n"
                                    "compute: {forward: 1ms, backward: 2ms, batch: 1}\n";
  const Scenario s = load_scenario(dir + "/s.yaml");
  EXPECT_EQ(s.points.at(0).workload->total_elements(), 4000u);
  EXPECT_EQ(s.points.at(0).workload->name, "grads");
}

// NCCL's protocols price the buckets by default; raw is the route alone, and a protocol only adds cost here.
// The defaults table knows the GPUs of Horovod's era and today's: a P100's ResNet-50 step is batch 64 at 219
// img/s, an H200's is the H100's; and the network's link kind sweeps like any preset key: TCP sockets cost
// the same job more communication than RoCE on the same 25 GbE.
TEST(Scenario, P100DefaultsAndTcpAgainstRoce) {
  const Scenario s = parse_scenario(R"(name: horovod_era
topology: {preset: pcie_server, nodes: 4, gpus: 4, nic: 25Gbps, net: [roce, tcp]}
workload: resnet50
compute: {gpu: p100}
communication: {algorithm: ring}
)",
                                    "h.yaml", "");
  ASSERT_EQ(s.points.size(), 2u);
  const ComputeProfile& p100 = s.points[0].compute;
  EXPECT_EQ(p100.batch_per_gpu, 64);
  EXPECT_NEAR(p100.forward_s + p100.backward_s, 64.0 / 219, 1e-12);
  EXPECT_EQ(p100.sms, 56);
  const std::vector<PointResult> r = predict_scenario(s);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NE(r[0].point->label().find("net=roce"), std::string::npos) << r[0].point->label();
  EXPECT_GT(r[1].prediction.communication_s, r[0].prediction.communication_s);
  EXPECT_LE(r[1].prediction.efficiency, r[0].prediction.efficiency);

  ComputeProfile h100, h200;
  ASSERT_TRUE(default_compute("resnet50", "h100", h100));
  ASSERT_TRUE(default_compute("resnet50", "h200", h200));
  EXPECT_DOUBLE_EQ(h200.backward_s, h100.backward_s);
  ComputeProfile vgg;  // TensorFlow's DGX-1 page: 154 img/s at batch 64
  ASSERT_TRUE(default_compute("vgg16", "p100", vgg));
  EXPECT_NEAR(vgg.forward_s + vgg.backward_s, 64.0 / 154, 1e-12);
  EXPECT_FALSE(default_compute("vgg16", "a100", h200));
}

TEST(Scenario, ProtocolAndReductionRateAreSettable) {
  const Scenario dflt = parse_scenario(kBase, "s.yaml", "");
  EXPECT_EQ(dflt.points.at(0).cost.protocol, Protocol::Auto);
  const Scenario set =
      parse_scenario(std::string(kBase) + "  protocol: simple\n  reduce_rate: 100GB/s\n", "s.yaml", "");
  EXPECT_EQ(set.points.at(0).cost.protocol, Protocol::Simple);
  EXPECT_DOUBLE_EQ(set.points.at(0).cost.reduce_Bps, 100e9);
  const Scenario swept = parse_scenario(kBase, "s.yaml", "", {"communication.protocol=[raw,simple]"});
  std::vector<std::string> labels;
  for (const ScenarioPoint& p : swept.points)
    labels.push_back(p.label());
  EXPECT_EQ(swept.points.size(), 2 * dflt.points.size());
  bool raw = false, simple = false;
  for (const ScenarioPoint& p : swept.points)
    raw |= p.cost.protocol == Protocol::Raw, simple |= p.cost.protocol == Protocol::Simple;
  EXPECT_TRUE(raw && simple);
  // NCCL_PROTO's syntax: Auto among what is left.
  const Scenario some = parse_scenario(std::string(kBase) + "  protocol: ^ll128\n", "s.yaml", "");
  EXPECT_EQ(some.points.at(0).cost.protocol, Protocol::Auto);
  EXPECT_EQ(some.points.at(0).cost.auto_protocols,
            protocol_bit(Protocol::LL) | protocol_bit(Protocol::Simple));
}

TEST(Scenario, ErrorsNameFileLineAndField) {
  EXPECT_EQ(error_of(std::string(kBase) + "  colour: red\n"),
            "s.yaml:10: communication.colour: unknown field (valid: algorithm, fusion, bucket, first_bucket, "
            "cycle, fp16, sync, chunk, channels, protocol, reduce_rate, inter)");
  EXPECT_NE(
      error_of(std::string(kBase) + "  protocol: fast\n")
          .find(
              "s.yaml:10: communication.protocol: 'fast' is not valid (valid: auto, ll, ll128, simple, raw, "
              "or as NCCL_PROTO takes them"),
      std::string::npos);
  EXPECT_EQ(error_of(std::string(kBase) + "  bucket: 25 megs\n"),
            "s.yaml:10: communication.bucket: '25 megs' has an unknown unit 'megs' for a size; valid units: "
            "4096, 4096B, 64KiB, 64MiB, 1GiB, 1MB, 1GB");
  EXPECT_NE(error_of(std::string(kBase) + "  fp16: maybe\n")
                .find("s.yaml:10: communication.fp16: 'maybe' is not true or false"),
            std::string::npos);
  EXPECT_NE(
      error_of(std::string(kBase) + "  bucket: []\n").find("s.yaml:10: communication.bucket: an empty list"),
      std::string::npos);
  EXPECT_NE(error_of(std::string(kBase) + "backend: ns3\n")
                .find("s.yaml:10: backend: 'ns3' is not valid (valid: ab, sim)"),
            std::string::npos);
  // The bad element of a list is the one reported, on its own line.
  EXPECT_NE(
      error_of("name: t\ntopology:\n  preset: dgx_a100\n  nodes:\n    - 1\n    - 0\nworkload: resnet50\n"
               "compute: {gpu: a100}\n")
          .find("s.yaml:6: topology.nodes: must be >= 1 (got 0)"),
      std::string::npos);
  EXPECT_NE(error_of(std::string(kBase) + "  algorithm: [ring, tree]\n")
                .find("s.yaml:10: communication.algorithm: duplicate field"),
            std::string::npos);
  // Found by the scenario fuzzer's seed corpus: this failed only when the sweep reached the point.
  EXPECT_NE(
      error_of(std::string(kBase) + "  sync: zero\n")
          .find("s.yaml:9: communication.algorithm: 'tree' cannot plan the reduce-scatter and allgather of "
                "sync: zero (valid: auto, nccl, ring, pat, nvls)"),
      std::string::npos);
  EXPECT_NE(error_of(kBase, {"communication.algorithm=[ring, rign]"})
                .find("s.yaml: --set communication.algorithm: 'rign' is not valid (valid: auto, nccl, ring"),
            std::string::npos);
  EXPECT_NE(
      error_of("name: t\ntopology: {preset: dgx_x900, nodes: 1}\nworkload: resnet50\ncompute: {gpu: a100}\n")
          .find("s.yaml:2: topology: "),
      std::string::npos);
  EXPECT_NE(
      error_of("name: t\ntopology: {preset: dgx_a100, nodes: 1}\nworkload: alexnet\ncompute: {gpu: a100}\n")
          .find("s.yaml:3: workload: unknown workload 'alexnet'"),
      std::string::npos);
  EXPECT_NE(
      error_of("name: t\ntopology: {preset: dgx_a100, nodes: 1}\nworkload: vgg16\ncompute: {gpu: a100}\n")
          .find("s.yaml:4: compute.gpu: no default compute profile for vgg16"),
      std::string::npos);
  EXPECT_NE(
      error_of("name: t\nworkload: resnet50\ncompute: {gpu: a100}\n").find("s.yaml:1: topology: missing"),
      std::string::npos);
  EXPECT_NE(error_of("name: t\ntopology: [1, 2\n").find("s.yaml:"), std::string::npos);  // YAML syntax
  EXPECT_EQ(error_of(kBase, {"communication.algorithm=fastest"}).substr(0, 40),
            "s.yaml: --set communication.algorithm: '");
  EXPECT_NE(error_of(kBase, {"nodes"}).find("expected FIELD=VALUE"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"compute.jitter=0.9"}).find("compute.jitter"), std::string::npos);
  EXPECT_EQ(error_of(kBase, {"compute.jitter=[0, 0.02]"}), "no error");
  // Selections: NCCL's algorithms only, or one NCCL_ALGO name (any case); under ZeRO both collectives need
  // it.
  EXPECT_EQ(error_of(kBase, {"communication.algorithm=[nccl, Ring, nvlstree]"}), "no error");
  EXPECT_EQ(error_of(std::string(kBase) + "  sync: zero\n", {"communication.algorithm=[nccl, PAT]"}),
            "no error");
  EXPECT_NE(error_of(std::string(kBase) + "  sync: zero\n", {"communication.algorithm=NVLSTree"})
                .find("'NVLSTree' cannot plan the reduce-scatter and allgather"),
            std::string::npos);
}

TEST(Scenario, DegradedLinksChangeTheTopologyAndOnlyTheChosenLinks) {
  const Scenario s = parse_scenario(std::string(kBase) + R"(faults:
  degrade:
    kind: infiniband
    bandwidth: [1.0, 0.25]
    latency: 3us
)",
                                    "s.yaml", "");
  ASSERT_EQ(s.points.size(), 12u);
  const ScenarioPoint& full = s.points[6];  // nodes=2 algorithm=ring bandwidth=1.0
  const ScenarioPoint& slow = s.points[7];  // nodes=2 algorithm=ring bandwidth=0.25
  ASSERT_EQ(slow.label(), "nodes=2 algorithm=ring bandwidth=0.25");
  EXPECT_EQ(slow.degraded_links, 16);  // 8 NICs per node, two nodes, each to the switch
  for (std::size_t l = 0; l < slow.topology->num_links(); ++l) {
    const topo::Link& a = full.topology->link(l);
    const topo::Link& b = slow.topology->link(l);
    if (a.kind == topo::LinkKind::InfiniBand) {
      EXPECT_DOUBLE_EQ(b.bandwidth_Bps, a.bandwidth_Bps * 0.25);
      EXPECT_DOUBLE_EQ(b.latency_s, a.latency_s);  // bandwidth 1.0 vs 0.25 differ only in bandwidth
    } else {
      EXPECT_EQ(a, b);
    }
  }
  const topo::Topology base = topo::load_topology("dgx_a100:2");
  for (std::size_t l = 0; l < base.num_links(); ++l) {
    if (base.link(l).kind == topo::LinkKind::InfiniBand) {
      EXPECT_DOUBLE_EQ(full.topology->link(l).latency_s, base.link(l).latency_s + 3e-6);
    }
  }
}

TEST(Scenario, DegradeByNameOrFractionAndStragglers) {
  const Scenario by_name = parse_scenario(std::string(kBase) + R"(faults:
  degrade: {link: n0.nic0-switch, bandwidth: 0.5}
  stragglers: {gpus: 1, factor: 1.5}
)",
                                          "s.yaml", "");
  EXPECT_EQ(by_name.points.back().degraded_links, 1);
  EXPECT_EQ(by_name.points.back().stragglers.gpus, 1);
  EXPECT_DOUBLE_EQ(by_name.points.back().stragglers.factor, 1.5);
  const Scenario by_fraction = parse_scenario(std::string(kBase) + R"(faults:
  degrade: {fraction: 0.25, seed: 3, bandwidth: 0.5}
)",
                                              "s.yaml", "");
  EXPECT_EQ(by_fraction.points.back().degraded_links, 4);  // a quarter of the 16 fabric links
}

TEST(Scenario, FailedLinksRerouteOrPartition) {
  const char* const leaf_spine = R"(name: t
topology:
  preset: dgx_a100
  nodes: 8
  fabric: leaf_spine
  leaf_size: 4
workload: resnet50
compute:
  gpu: a100
communication:
  algorithm: ring
faults:
  fail:
    link: [none, leaf0-spine0]
)";
  const Scenario s = parse_scenario(leaf_spine, "s.yaml", "");
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_EQ(s.points[0].failed_links, 0);
  EXPECT_EQ(s.points[1].failed_links, 1);
  // Node 0 (leaf 0) to node 4 (leaf 1): the healthy route may cross either spine, the faulted one never uses
  // the failed link.
  const topo::Topology& t = *s.points[1].topology;
  std::size_t failed = t.num_links();
  for (std::size_t l = 0; l < t.num_links(); ++l)
    if (t.link_failed(l)) failed = l;
  ASSERT_LT(failed, t.num_links());
  for (int from = 0; from < 32; ++from) {
    for (const topo::Hop& h : t.route_between_ranks(from, 32 + from).hops)
      EXPECT_NE(h.link, failed) << "rank " << from;
  }
  const std::string partitioned = error_of(std::string(kBase) + "faults:\n  fail: {kind: infiniband}\n");
  EXPECT_NE(partitioned.find("faults: failing 16 link(s) partitions dgx_a100:2: no path from n0.gpu0 to n1."),
            std::string::npos)
      << partitioned;
}

TEST(Scenario, LostNodesShrinkTheWorldAndCostTheRedoneSteps) {
  std::string two_nodes = kBase;
  two_nodes.replace(two_nodes.find("nodes: [1, 2]"), 13, "nodes: 2");
  const Scenario s = parse_scenario(two_nodes + R"(faults:
  lost_nodes: {nodes: 1, at_step: 650, checkpoint_every: 100, restart: 30s, steps: 1000}
)",
                                    "s.yaml", "");
  const ScenarioPoint& p = s.points.back();  // nodes=2
  ASSERT_TRUE(p.lost.active());
  EXPECT_EQ(p.gpus(), 16);
  EXPECT_EQ(p.shrunk_topology->gpus().size(), 8u);
  EXPECT_EQ(shrunk_topology_spec("dgx_a100:4,nic=100Gbps", 1), "dgx_a100:3,nic=100Gbps");
  // 16 GPUs x 10 samples at 1 s per step, then 8 GPUs at 1.5 s per step.
  const ElasticOutcome e = elastic_outcome(p.lost, 16, 8, 10, 1.0, 1.5);
  EXPECT_EQ(e.redone_steps, 50);
  EXPECT_DOUBLE_EQ(e.lost_work_s, 50.0);
  EXPECT_DOUBLE_EQ(e.samples_per_s_after, 8 * 10 / 1.5);
  EXPECT_DOUBLE_EQ(e.healthy_job_s, 1000.0);
  // 650 s until the loss, 30 s restart, then the 400 steps' samples (from the checkpoint at 600) at the new
  // rate: 400 x 160 samples / (80 / 1.5) samples/s = 1200 s.
  EXPECT_DOUBLE_EQ(e.job_s, 650 + 30 + 1200);
  EXPECT_NE(error_of(two_nodes + "faults:\n  lost_nodes: {nodes: 2, at_step: 5, checkpoint_every: 1, "
                                 "restart: 1s, steps: 10}\n")
                .find("losing 2 of 2 nodes leaves no world"),
            std::string::npos);
  EXPECT_NE(error_of(two_nodes + "faults:\n  lost_nodes: {nodes: 1, at_step: 50, checkpoint_every: 1, "
                                 "restart: 1s, steps: 10}\n")
                .find("faults.lost_nodes.at_step: the job has only 10 steps"),
            std::string::npos);
}

// Checkpoint writes stall the job: the healthy run pays steps/every of them; the run with the loss pays those
// before the loss and those of the survivors after the checkpoint they reloaded.
TEST(Scenario, LostNodesChargeCheckpointWrites) {
  std::string two_nodes = kBase;
  two_nodes.replace(two_nodes.find("nodes: [1, 2]"), 13, "nodes: 2");
  const Scenario s = parse_scenario(two_nodes + R"(faults:
  lost_nodes: {nodes: 1, at_step: 650, checkpoint_every: 100, checkpoint_write: 5s, restart: 30s, steps: 1000}
)",
                                    "s.yaml", "");
  const LostNodes& lost = s.points.back().lost;
  EXPECT_DOUBLE_EQ(lost.checkpoint_write_s, 5.0);
  // 16 GPUs x 10 samples at 1 s per step, then 8 GPUs at 1.5 s per step: 800 steps after the checkpoint at
  // step 600; 6 checkpoints before the loss and 8 after.
  const ElasticOutcome e = elastic_outcome(lost, 16, 8, 10, 1.0, 1.5);
  EXPECT_EQ(e.steps_after, 800);
  EXPECT_EQ(e.checkpoints, 14);
  EXPECT_DOUBLE_EQ(e.checkpoint_s, 70.0);
  EXPECT_DOUBLE_EQ(e.healthy_job_s, 1000.0 + 10 * 5.0);
  EXPECT_DOUBLE_EQ(e.job_s, 650 + 30 + 1200 + 70);
  // 12 survivors: 400 x 160 samples in steps of 120 is 533.3, so 534 steps (the last one partial).
  const ElasticOutcome twelve = elastic_outcome(lost, 16, 12, 10, 1.0, 1.2);
  EXPECT_EQ(twelve.steps_after, 534);
  EXPECT_EQ(twelve.checkpoints, 6 + 5);
  EXPECT_NE(error_of(two_nodes + "faults:\n  lost_nodes: {nodes: 1, at_step: 5, checkpoint_every: 1, "
                                 "checkpoint_write: fast, restart: 1s, steps: 10}\n")
                .find("faults.lost_nodes.checkpoint_write"),
            std::string::npos);
}

TEST(Scenario, FaultErrorsNameTheField) {
  EXPECT_NE(error_of(std::string(kBase) + "faults:\n  degrade: {kind: infiniband, link: x, bandwidth: 0.5}\n")
                .find("faults.degrade: choose the links with exactly one of kind, link or fraction"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kBase) + "faults:\n  degrade: {link: nowhere, bandwidth: 0.5}\n")
                .find("no link 'nowhere'"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kBase) + "faults:\n  degrade: {kind: infiniband, bandwidth: 2}\n")
                .find("s.yaml:11: faults.degrade.bandwidth: must be in"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kBase) + "faults:\n  stragglers: {gpus: 99, factor: 2}\n")
                .find("more stragglers than GPUs"),
            std::string::npos);
  EXPECT_NE(
      error_of(std::string(kBase) + "faults:\n  lost_gpus: 1\n").find("faults.lost_gpus: unknown field"),
      std::string::npos);
}

TEST(Scenario, TheBuiltInDefaultIsTheShippedFile) {
  const Scenario s = parse_scenario(default_scenario_text(), "<built-in default>", "");
  EXPECT_EQ(s.name, "default");
  ASSERT_EQ(s.points.size(), 24u);  // 8 -> 256 GPUs x ring, tree, hierarchical, auto
  EXPECT_EQ(s.points.front().gpus(), 8);
  EXPECT_EQ(s.points.back().gpus(), 256);
  EXPECT_EQ(s.points.back().algorithm, "auto");
}

// A sweep split in shards (what `mpirun -np N cclab predict` runs) and merged back is the serial result to
// the last bit, elastic outcomes included.
TEST(Scenario, ShardsMergeIntoTheSerialResult) {
  const Scenario s = parse_scenario(R"(name: shards
topology: {preset: dgx_a100, nodes: [2, 4, 8]}
workload: resnet50
compute: {gpu: a100}
communication: {algorithm: [ring, tree, auto]}
faults:
  lost_nodes: {nodes: 1, at_step: 650, checkpoint_every: 100, restart: 30s, steps: 1000}
)",
                                    "shards.yaml", "");
  PredictOptions options;
  options.jobs = 1;
  const std::vector<PointResult> serial = predict_scenario(s, options);
  for (std::size_t count : {1u, 3u, 8u, 11u}) {
    std::vector<std::string> shards;
    for (std::size_t index = 0; index < count; ++index)
      shards.push_back(predict_shard(s, options, Shard{index, count}));
    const std::vector<PointResult> merged = merge_shards(s, shards);
    EXPECT_EQ(results_json(s, merged), results_json(s, serial)) << count << " shards";
    ASSERT_EQ(merged.size(), serial.size());
    for (std::size_t i = 0; i < merged.size(); ++i) {  // what the timeline draws, beyond the JSON rows
      EXPECT_EQ(merged[i].point, serial[i].point);
      ASSERT_EQ(merged[i].prediction.buckets.size(), serial[i].prediction.buckets.size());
      for (std::size_t b = 0; b < merged[i].prediction.buckets.size(); ++b) {
        EXPECT_EQ(merged[i].prediction.buckets[b].end_s, serial[i].prediction.buckets[b].end_s);
        EXPECT_EQ(merged[i].prediction.buckets[b].algorithm, serial[i].prediction.buckets[b].algorithm);
      }
      EXPECT_EQ(merged[i].prediction.slowest.optimizer_end_s, serial[i].prediction.slowest.optimizer_end_s);
      ASSERT_EQ(merged[i].elastic.has_value(), serial[i].elastic.has_value());
      if (merged[i].elastic) {
        EXPECT_EQ(merged[i].elastic->job_s, serial[i].elastic->job_s);
      }
    }
  }
  // Without one shard, the merge refuses.
  std::vector<std::string> partial{predict_shard(s, options, Shard{0, 2})};
  EXPECT_THROW(merge_shards(s, partial), InternalError);
}

// `backend: sim` points simulate their collectives side by side first (a batch), then take the times from
// there: the same results as one simulation at a time, each collective simulated once, and one whose
// simulation failed in the batch simulated alone when its point asks. A stand-in simulator (a function of
// the schedule) keeps SimGrid out of it.
TEST(Scenario, SimulatedPointsBatchTheirCollectives) {
  const Scenario s = parse_scenario(R"(name: batch
topology: {preset: dgx_a100, nodes: [1, 2, 4]}
workload: resnet50
compute: {gpu: a100}
communication: {algorithm: [ring, tree, auto], reduce_rate: [500GB/s, 50GB/s]}
backend: [sim, ab]
)",
                                    "batch.yaml", "");
  std::set<double> rates;  // the reduction rates the simulator was given
  auto stand_in = [&](const CompactSchedule& schedule, const CostParams& cost) {
    rates.insert(cost.reduce_Bps);
    return 1e-3 + static_cast<double>(schedule.spec.count) * 1e-10 * schedule.world_size() +
           1e-6 * static_cast<int>(cost.protocol) + (schedule.algorithm == "tree" ? 2e-4 : 0.0) +
           static_cast<double>(schedule.spec.count) / cost.reduce_Bps;
  };
  int alone = 0, rings_alone = 0;  // the stand-in "solves rings by pattern"
  PredictOptions options;
  options.simulate = [&](const CompactSchedule& schedule, const topo::Topology&, const CostParams& cost) {
    ++alone;
    if (schedule.algorithm == "ring") ++rings_alone;
    return ScheduleTime{stand_in(schedule, cost), schedule.algorithm == "ring"};
  };
  options.jobs = 1;  // one process: no batch
  PredictStats serial_stats;
  const nlohmann::json serial = results_json(s, predict_scenario(s, options, &serial_stats));
  const int simulations = alone;
  ASSERT_GT(simulations, 3);
  // Each distinct simulation is counted once, by the way it ran.
  EXPECT_EQ(serial_stats.simulated, static_cast<std::size_t>(simulations));
  EXPECT_EQ(serial_stats.simulated_by_pattern, static_cast<std::size_t>(rings_alone));
  EXPECT_GT(rings_alone, 0);
  EXPECT_LT(rings_alone, simulations);
  EXPECT_EQ(rates, (std::set<double>{50e9, 500e9})) << "each point's reduction rate reaches the simulator";

  std::vector<std::size_t> batch_sizes;
  std::set<std::pair<const CompactSchedule*, int>> batched;
  bool fail_one = false;
  options.simulate_batch = [&](const std::vector<TimedSchedule>& jobs, int parallel,
                               const std::function<void(std::size_t)>& finished) {
    EXPECT_EQ(parallel, 2);
    batch_sizes.push_back(jobs.size());
    std::vector<ScheduleTime> times;
    for (const TimedSchedule& job : jobs) {
      EXPECT_TRUE(batched.insert({job.schedule, static_cast<int>(job.cost.protocol)}).second)
          << "asked twice";
      times.push_back({stand_in(*job.schedule, job.cost), job.schedule->algorithm == "ring"});
      if (finished) finished(times.size() - 1);
    }
    if (fail_one) times.front().seconds = std::numeric_limits<double>::quiet_NaN();
    return times;
  };
  options.jobs = 2;
  alone = 0;
  PredictStats batch_stats;
  EXPECT_EQ(results_json(s, predict_scenario(s, options, &batch_stats)), serial);
  EXPECT_EQ(batch_stats.simulated, serial_stats.simulated);
  EXPECT_EQ(batch_stats.simulated_by_pattern, serial_stats.simulated_by_pattern);
  EXPECT_EQ(batch_sizes, std::vector<std::size_t>{static_cast<std::size_t>(simulations)});
  EXPECT_EQ(alone, 0) << "every simulation was in the batch";

  // A simulation that failed in the batch runs alone for the point that needs it; the rest come from it.
  batch_sizes.clear(), batched.clear();
  fail_one = true;
  alone = 0;
  EXPECT_EQ(results_json(s, predict_scenario(s, options)), serial);
  EXPECT_EQ(alone, 1);
}

}  // namespace
}  // namespace cclab
