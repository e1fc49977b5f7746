// Expansion pins the compact form to the explicit semantics: for every planner, over the planner matrix
// (world sizes up to 64, awkward counts, every dtype, 1 to 3 channels, both hierarchical inter algorithms)
// and topology-derived worlds, the explicit schedule that expansion yields equals, op for op, the one the
// planners produced before the compact form existed. Those schedules are kept as 64-bit fingerprints in
// tests/data/explicit_fingerprints.txt, written by the explicit planners of commit 29d80e7 (the collnet
// and nvls_sharp points on SHARP presets by those of commit 0a3314b, before their compact pass; the collnet
// points again on 2026-12-06, when a pair's scatter and gather moved to adjacent IR channels, the two lanes
// of one network channel: the same ops on other channel numbers). The collnet_chain points were written by
// its own compact planner on 2026-12-06 (it never had an explicit one): they pin its schedules.
//
// To regenerate on purpose (a planner change that alters schedules):
//   CCLAB_WRITE_FINGERPRINTS=tests/data/explicit_fingerprints.txt build/tests/expansion_test
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/memory.hpp"
#include "engine/check/verified.hpp"
#include "engine/ir/schedule_json.hpp"
#include "engine/plan/hypercube_allgather.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/registry.hpp"
#include "engine/plan/ring_pattern.hpp"
#include "engine/plan/ring_search.hpp"
#include "tests/harness.hpp"
#include "topology/presets.hpp"

#ifndef CCLAB_SOURCE_DIR
#error "CCLAB_SOURCE_DIR must name the source tree (tests/CMakeLists.txt sets it)"
#endif

namespace cclab {
namespace {

// FNV-1a over every field of every op, the deps and the scratch size of each rank.
class Fingerprint {
 public:
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (v >> (8 * i)) & 0xff;
      h_ *= 0x100000001b3ULL;
    }
  }
  void add(const Chunk& c) {
    add(static_cast<std::uint64_t>(c.buffer));
    add(c.offset);
    add(c.count);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::uint64_t fingerprint(const Schedule& s) {
  Fingerprint f;
  f.add(s.ranks.size());
  for (const Program& p : s.ranks) {
    f.add(p.ops.size());
    f.add(p.scratch_count);
    for (const Op& op : p.ops) {
      f.add(static_cast<std::uint64_t>(op.kind));
      f.add(op.channel);
      f.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(op.peer)));
      f.add(op.src);
      f.add(op.dst);
      const auto deps = p.deps_of(op);
      f.add(deps.size());
      for (OpId d : deps)
        f.add(d);
    }
  }
  return f.value();
}

struct Point {
  std::string key;
  std::uint64_t hash;
};

// One channel per GPU of an eight-GPU NVSwitch node: the ring default there when the fingerprints were taken.
constexpr int kChannelsPerNvSwitchGpu = 8;

std::vector<Point> matrix_points() {
  std::vector<Point> points;
  // name: the topology as the key names it, where that is not t.name() (the preset string as written).
  // key_channels: the channel count the key names, where it is not the one planned with.
  auto add = [&](const Algorithm& a, const topo::Topology& t, std::uint64_t count, DType dtype, int root,
                 const PlanOptions& o, const std::string& name = "", std::optional<int> key_channels = {}) {
    // An alltoall moves P equal blocks: `count` blocks' worth.
    if (a.collective == Collective::AllToAll) count *= t.gpus().size();
    const CollectiveSpec spec = spec_for(t, a.collective, count, dtype, ReduceOp::Sum, root);
    if (!a.supports(spec, t, o).ok) return;
    const std::string key =
        fmt::format("{}/{} {} count={} {} root={} chunk={} channels={} inter={}", to_string(a.collective),
                    a.name, name.empty() ? t.name() : name, count, to_string(dtype), root, o.chunk_bytes,
                    key_channels.value_or(o.channels), o.inter);
    points.push_back({key, fingerprint(a.plan(spec, t, o))});
  };
  for (const Algorithm& a : algorithms()) {
    for (int world : {1, 2, 3, 5, 7, 8, 11, 16, 24, 31, 64}) {
      const topo::Topology t = testing::flat_topology(world);
      const std::uint64_t uneven = 13ULL * world + 5;
      for (int channels : {1, 2, 3}) {
        for (const char* inter : {"ring", "tree"}) {
          if (a.name != "hierarchical" && std::string(inter) == "tree") continue;
          PlanOptions o;
          o.chunk_bytes = 64;
          o.channels = channels;
          o.inter = inter;
          for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, uneven})
            for (DType dtype : {DType::F32, DType::F16})
              add(a, t, count, dtype, world / 2, o);
        }
      }
      add(a, t, (1 << 20) + 3, DType::F32, 0, PlanOptions{});
    }
    const std::vector<std::string> presets = {"dgx_a100:{}", "dgx_h100:{},fabric=rail",
                                              "pcie_server:{},gpus=4", "pcie_server:{},gpus=3"};
    for (const std::string& pattern : presets) {
      for (int nodes : {1, 2, 3, 5}) {
        const topo::Topology t = topo::make_preset(fmt::format(fmt::runtime(pattern), nodes));
        const int world = static_cast<int>(t.gpus().size());
        for (const char* inter : {"ring", "tree"}) {
          PlanOptions o;
          o.chunk_bytes = 256;
          o.inter = inter;
          // Until 2026-12-06 the rings of one NVSwitch node had a channel per GPU (8); they now take NCCL's
          // count (RingSearch.NcclChannelsOnOneNvSwitchNode), which the explicit planners never planned.
          // Planners on the ring default (the same plan as with its count given) plan these points with the
          // count their fingerprints were taken with.
          const std::uint64_t count = 37ULL * world + 3;
          const CollectiveSpec spec = spec_for(t, a.collective, count, DType::F32, ReduceOp::Sum, world - 1);
          const int ring_default = planners::default_ring_channels(t);
          if (nodes == 1 && pattern.starts_with("dgx_") && a.supports(spec, t, o).ok) {
            PlanOptions at_default = o, recorded = o;
            at_default.channels = ring_default;
            recorded.channels = kChannelsPerNvSwitchGpu;
            if (fingerprint(a.plan(spec, t, o)) == fingerprint(a.plan(spec, t, at_default))) {
              add(a, t, count, DType::F32, world - 1, recorded, "", o.channels);
              continue;
            }
          }
          add(a, t, count, DType::F32, world - 1, o);
        }
      }
    }
    // In-network reduction needs SHARP switches: the algorithms that use them, on SHARP presets (CollNetChain
    // also on DGX-1 meshes, where its chains follow the NVLinks and Direct does not run).
    if (a.name == "collnet" || a.name == "nvls_sharp" || a.name == "collnet_chain") {
      for (const char* pattern : {"dgx_a100:{},sharp=1", "dgx_h100:{},sharp=1", "dgx_h100:{},sharp=1,gpus=3",
                                  "dgx1_v100:{},sharp=1"}) {
        for (int nodes : {2, 3, 5}) {
          const std::string name = fmt::format(fmt::runtime(pattern), nodes);
          const topo::Topology t = topo::make_preset(name);
          if (!a.supports(spec_for(t, a.collective, 5, DType::F32, ReduceOp::Sum, 0), t, PlanOptions{}).ok)
            continue;
          const int world = static_cast<int>(t.gpus().size());
          for (int channels : {0, 1, 3}) {
            PlanOptions o;
            o.chunk_bytes = 256;
            o.channels = channels;
            for (std::uint64_t count : {std::uint64_t{5}, std::uint64_t{37ULL * world + 3}})
              add(a, t, count, DType::F32, 0, o, name);
          }
        }
      }
    }
  }
  return points;
}

std::map<std::string, std::uint64_t> read_fingerprints(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::uint64_t> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.rfind(" : ");
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    out[line.substr(0, colon)] = std::stoull(line.substr(colon + 3), nullptr, 16);
  }
  return out;
}

TEST(Expansion, EqualsTheExplicitPlannersOpForOp) {
  const auto points = matrix_points();
  ASSERT_GT(points.size(), 1000u);
  if (const char* out = std::getenv("CCLAB_WRITE_FINGERPRINTS")) {
    std::ofstream file(out);
    file
        << "# explicit-schedule fingerprints, tests/expansion_test.cpp; key : FNV-1a of ops, deps, scratch\n";
    for (const Point& p : points)
      file << p.key << " : " << fmt::format("{:016x}", p.hash) << "\n";
    GTEST_SKIP() << "wrote " << points.size() << " fingerprints to " << out;
  }
  const auto expected = read_fingerprints(CCLAB_SOURCE_DIR "/tests/data/explicit_fingerprints.txt");
  ASSERT_EQ(expected.size(), points.size()) << "the matrix and the committed fingerprints differ in size";
  int mismatches = 0;
  for (const Point& p : points) {
    const auto it = expected.find(p.key);
    ASSERT_NE(it, expected.end()) << "no committed fingerprint for " << p.key;
    if (it->second != p.hash && ++mismatches <= 10) ADD_FAILURE() << "schedule differs: " << p.key;
  }
  EXPECT_EQ(mismatches, 0);
}

// The op count the memory guard relies on is exact, and every planner passes its preconditions (and, where
// small, the full verifier on the expansion).
TEST(Compact, OpCountAndPreconditionsForEveryPlanner) {
  for (const Algorithm& a : algorithms()) {
    for (const std::string& preset :
         {std::string("pcie_server:5,gpus=1"), std::string("dgx_a100:2"), std::string("pcie_server:3,gpus=3"),
          std::string("dgx_h100:3,gpus=3"), std::string("dgx_h100:3,gpus=3,sharp=1"),
          std::string("dgx_a100:2,sharp=1,nics=4")}) {
      const topo::Topology t = topo::make_preset(preset);
      PlanOptions o;
      o.chunk_bytes = 64;
      const CollectiveSpec spec =
          spec_for(t, a.collective, 41ULL * t.gpus().size() + 3, DType::F32, ReduceOp::Sum, 1);
      if (!a.supports(spec, t, o).ok) continue;
      const CompactSchedule s = a.compact(spec, t, o);
      const std::string what = fmt::format("{} {} on {}", to_string(a.collective), a.name, preset);
      EXPECT_EQ(count_explicit_ops(s), to_explicit(s).num_ops()) << what;
      EXPECT_EQ(check_compact(s), std::nullopt) << what;
      EXPECT_EQ(check_compact(s, VerifyDepth::All), std::nullopt) << what;
    }
  }
}

CompactSchedule ring4() {
  CollectiveSpec spec;
  spec.world_size = 4;
  spec.count = 40;
  return one_lane(spec, "ring", planners::ring_allreduce_pass(planners::identity_rings(4, 2), 40, 0));
}

void expect_rejected(const CompactSchedule& s, const std::string& needle) {
  const auto error = check_compact(s);
  ASSERT_TRUE(error) << "accepted";
  EXPECT_NE(error->find(needle), std::string::npos) << *error;
  EXPECT_THROW(verify_compact(s), PlanError);
}

TEST(Preconditions, RejectBrokenRingsTreesAndPlacements) {
  ASSERT_EQ(check_compact(ring4()), std::nullopt);
  {  // a ring that visits member 1 twice
    RingPass p = planners::ring_allreduce_pass(planners::identity_rings(4, 1), 40, 0);
    p.rings[0] = {0, 1, 1, 3};
    CollectiveSpec spec = ring4().spec;
    expect_rejected(one_lane(spec, "ring", p), "not a permutation");
  }
  {  // a tree with a cycle: 1 and 2 each other's parent, unreachable from the root
    TreePass p;
    p.count = 40;
    p.trees.push_back(tree_from_parents({-1, 2, 1, 0}));
    expect_rejected(one_lane(ring4().spec, "tree", p), "reaches 2 of 4");
  }
  {  // a lane that places the output past the end of the buffer
    CompactSchedule s(ring4().spec, "ring");
    auto pass =
        std::make_shared<const Pass>(planners::ring_allreduce_pass(planners::identity_rings(4, 1), 40, 0));
    s.add_lane(Lane{{0, 1, 2, 3}, BufferPlace{Buffer::Input}, BufferPlace{Buffer::Output, 1}, pass});
    expect_rejected(s, "outside the rank's output");
  }
  {  // input and output overlapping, shifted: not the in-place layout of an allreduce
    CollectiveSpec spec = ring4().spec;
    spec.count = 80;
    CompactSchedule s(spec, "ring");
    auto pass =
        std::make_shared<const Pass>(planners::ring_allreduce_pass(planners::identity_rings(4, 1), 40, 0));
    s.add_lane(Lane{{0, 1, 2, 3}, BufferPlace{Buffer::Output, 0}, BufferPlace{Buffer::Output, 10}, pass});
    expect_rejected(s, "overlap outside the in-place layout");
  }
  {  // a rank in two lanes of one phase is a planner bug, caught when the lane is added
    CompactSchedule s(ring4().spec, "ring");
    auto pass =
        std::make_shared<const Pass>(planners::ring_allreduce_pass(planners::identity_rings(2, 1), 40, 0));
    s.add_lane(Lane{{0, 1}, BufferPlace{Buffer::Input}, BufferPlace{Buffer::Output}, pass});
    EXPECT_THROW(s.add_lane(Lane{{1, 2}, BufferPlace{Buffer::Input}, BufferPlace{Buffer::Output}, pass}),
                 PlanError);
  }
}

// NVLSTree is planned as its compact pass: at 2,048 DGX H100 nodes (16,384 GPUs) a 1 GiB plan holds trees
// over the nodes, not the hundreds of millions of ops its expansion has, and its preconditions check in
// O(C·nodes). A pass whose tree leaves a node out is refused.
TEST(Compact, NvlsTreeIsPlannedCompactAtScale) {
  const topo::Topology t = topo::make_preset("dgx_h100:2048");
  const Algorithm& a = require_algorithm(Collective::AllReduce, "nvls_tree");
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 1ULL << 28, DType::F32, ReduceOp::Sum, 0);
  PlanOptions o;
  o.chunk_bytes = 1 << 20;
  const CompactSchedule s = a.compact(spec, t, o);
  ASSERT_EQ(s.phases().size(), 1u);
  const auto* pass = std::get_if<NvlsTreePass>(s.phases()[0].lanes[0].pass.get());
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->nodes(), 2048);
  EXPECT_EQ(pass->gpus_per_node, 8);
  EXPECT_GT(count_explicit_ops(s), 100'000'000u);
  EXPECT_EQ(check_compact(s), std::nullopt);

  const topo::Topology small = topo::make_preset("dgx_h100:3,gpus=2");
  const CompactSchedule fine =
      a.compact(spec_for(small, Collective::AllReduce, 100, DType::F32, ReduceOp::Sum, 0), small, o);
  ASSERT_EQ(check_compact(fine), std::nullopt);
  NvlsTreePass broken = std::get<NvlsTreePass>(*fine.phases()[0].lanes[0].pass);
  broken.trees[1] = tree_from_parents({-1, 0, 1});  // fine, a chain
  broken.trees[0] = tree_from_parents({-1, 0, 0});
  broken.trees[0].children[2].push_back(1);  // node 1 listed twice
  CompactSchedule bad(fine.spec, "nvls_tree");
  bad.add_lane(Lane{fine.phases()[0].lanes[0].ranks, BufferPlace{Buffer::Input}, BufferPlace{Buffer::Output},
                    std::make_shared<const Pass>(broken)});
  expect_rejected(bad, "nodes' tree 0");
}

// CollNet and NVLS with SHARP are planned as their compact pass: at 2,048 DGX H100 nodes a 1 GiB plan is a
// handful of numbers, not the tens of millions of ops of its expansion. A pass whose IR channels would not
// fit an op's channel field, or that has no channels, is refused.
TEST(Compact, SharpPassesArePlannedCompactAtScale) {
  const topo::Topology t = topo::make_preset("dgx_h100:2048,sharp=1");
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 1ULL << 28, DType::F32, ReduceOp::Sum, 0);
  PlanOptions o;
  o.chunk_bytes = 1 << 20;
  for (const char* name : {"collnet", "nvls_sharp"}) {
    const CompactSchedule s = require_algorithm(Collective::AllReduce, name).compact(spec, t, o);
    ASSERT_EQ(s.phases().size(), 1u) << name;
    const auto* pass = std::get_if<SharpPass>(s.phases()[0].lanes[0].pass.get());
    ASSERT_NE(pass, nullptr) << name;
    EXPECT_EQ(pass->nodes, 2048) << name;
    EXPECT_EQ(pass->gpus_per_node, 8) << name;
    EXPECT_EQ(pass_name(*s.phases()[0].lanes[0].pass), name);
    EXPECT_GT(count_explicit_ops(s), 10'000'000u) << name;
    EXPECT_EQ(check_compact(s), std::nullopt) << name;
  }
  const topo::Topology small = topo::make_preset("dgx_h100:2,gpus=2,sharp=1");
  const CompactSchedule fine =
      require_algorithm(Collective::AllReduce, "collnet")
          .compact(spec_for(small, Collective::AllReduce, 100, DType::F32), small, o);
  ASSERT_EQ(check_compact(fine), std::nullopt);
  auto with = [&](SharpPass p) {
    CompactSchedule s(fine.spec, "collnet");
    s.add_lane(Lane{fine.phases()[0].lanes[0].ranks, BufferPlace{Buffer::Input}, BufferPlace{Buffer::Output},
                    std::make_shared<const Pass>(p)});
    return s;
  };
  SharpPass wide = std::get<SharpPass>(*fine.phases()[0].lanes[0].pass);
  wide.channel_count = 65535 / 3 + 1;  // three IR channels per channel of two GPUs per node
  expect_rejected(with(wide), "more than 65,535 IR channels");
  SharpPass none = wide;
  none.channel_count = 0;
  expect_rejected(with(none), "without channels");
  // A loaded pass may name any GPU count: g(g−1) + 1 IR channels per channel must not overflow on the way
  // to being refused.
  CollectiveSpec spec50k = fine.spec;
  spec50k.world_size = 50'000;
  SharpPass crowded = std::get<SharpPass>(*fine.phases()[0].lanes[0].pass);
  crowded.nodes = 1;
  crowded.gpus_per_node = 50'000;
  crowded.channel_count = 1;
  CompactSchedule big(spec50k, "collnet");
  std::vector<int> everyone(50'000);
  std::iota(everyone.begin(), everyone.end(), 0);
  big.add_lane(Lane{everyone, BufferPlace{Buffer::Input}, BufferPlace{Buffer::Output},
                    std::make_shared<const Pass>(crowded)});
  expect_rejected(big, "more than 65,535 IR channels");
}

TEST(MemoryGuard, RefusesToExpandPastTheBudget) {
  const topo::Topology t = testing::flat_topology(64);
  PlanOptions o;
  o.chunk_bytes = 64;
  const CompactSchedule s = find_algorithm(Collective::AllReduce, "ring")
                                ->compact(spec_for(t, Collective::AllReduce, 1 << 20, DType::F32), t, o);
  set_memory_budget_bytes(std::uint64_t{64} << 20);
  try {
    (void)to_explicit(s);
    ADD_FAILURE() << "expanded " << count_explicit_ops(s) << " ops within a 64 MiB budget";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("more than the memory budget"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_compact(s, VerifyDepth::All), ConfigError);
  EXPECT_EQ(check_compact(s), std::nullopt);  // the compact checks need no expansion
  set_memory_budget_bytes(0);
}

// Plans whose every rank ends with a block of every other (hypercube and PAT allgather, alltoall) count
// the verifier's P² blocks, not only their ops: 1,024 ranks with a handful of ops each are refused within a
// budget their ops alone fit (1,024² blocks at 160 bytes: 168 MB), and planned within one that holds both.
TEST(MemoryGuard, BlockExchangesCountTheBlocksTheyVerify) {
  const topo::Topology t = testing::flat_topology(1024);
  const CollectiveSpec spec = spec_for(t, Collective::AllGather, 1024, DType::F32);
  const std::uint64_t ops = planners::hypercube_allgather_ops(spec, 1, 0);
  ASSERT_LT(ops * kExplicitBytesPerOp, std::uint64_t{64} << 20);
  for (const char* name : {"hypercube", "pat"}) {
    set_memory_budget_bytes(std::uint64_t{64} << 20);
    try {
      (void)find_algorithm(Collective::AllGather, name)->compact(spec, t, PlanOptions{});
      ADD_FAILURE() << name << " planned on 1,024 ranks within 64 MiB";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("1048576 blocks to verify"), std::string::npos) << e.what();
    }
    set_memory_budget_bytes(std::uint64_t{512} << 20);
    EXPECT_NO_THROW((void)find_algorithm(Collective::AllGather, name)->compact(spec, t, PlanOptions{}))
        << name;
  }
  set_memory_budget_bytes(0);
}

// The compact JSON form loads back to the same schedule: the same JSON again, the same expansion.
TEST(CompactJson, RoundTripsEveryPlanner) {
  for (const Algorithm& a : algorithms()) {
    for (const std::string& preset :
         {std::string("pcie_server:3,gpus=1"), std::string("pcie_server:2,gpus=3"),
          std::string("dgx_h100:3,gpus=2"), std::string("dgx_h100:3,gpus=2,sharp=1"),
          std::string("dgx_h100:1,gpus=3")}) {  // the last one NVLink domain: NVLS
      const topo::Topology t = topo::make_preset(preset);
      PlanOptions o;
      o.chunk_bytes = 64;
      o.inter = "tree";
      const CollectiveSpec spec =
          spec_for(t, a.collective, 29ULL * t.gpus().size() + 1, DType::BF16, ReduceOp::Max, 1);
      if (!a.supports(spec, t, o).ok) continue;
      const CompactSchedule s = a.compact(spec, t, o);
      const std::string text = compact_to_json(s);
      ASSERT_TRUE(is_compact_json(text));
      const CompactSchedule back = compact_from_json(text, "round-trip.json");
      const std::string what = fmt::format("{} {} on {}", to_string(a.collective), a.name, preset);
      EXPECT_EQ(compact_to_json(back), text) << what;
      EXPECT_EQ(fingerprint(to_explicit(back)), fingerprint(to_explicit(s))) << what;
      EXPECT_EQ(back.phases().size(), s.phases().size()) << what;
    }
  }
}

TEST(CompactJson, NamesTheBadField) {
  const std::string text = compact_to_json(ring4());
  auto broken = text;
  const std::string ring = "\"rings\":[[0,1,2,3]";
  broken.replace(broken.find(ring), ring.size(), "\"rings\":[[0,1,2,7]");
  try {
    (void)compact_from_json(broken, "bad.json");
    ADD_FAILURE() << "accepted " << broken;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("passes[0].rings[0][3]"), std::string::npos) << e.what();
  }
  // A count below its minimum is refused too, though JSON reads it as unsigned (a SHARP pass over 0 nodes
  // divided by zero on the way in: found by the fuzzer).
  const std::string sharp =
      R"({"form":"compact","algorithm":"nvls_sharp","collective":"allreduce","count":16,"dtype":"f32",)"
      R"("op":"sum","params":{"channels":16,"chunk":32,"lanes_per_channel":2},"root":0,"world_size":4,)"
      R"("passes":[{"channels":16,"count":16,"gpus_per_node":2,"intra":"nvls","kind":"sharp","nodes":0,)"
      R"("round_elems":8}],"phases":[[{"input":["input",0,0,0],"output":["output",0,0,0],"pass":0,)"
      R"("ranks":[0,1,2,3]}]]})";
  try {
    (void)compact_from_json(sharp, "sharp.json");
    ADD_FAILURE() << "accepted a SHARP pass over 0 nodes";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("passes[0].nodes"), std::string::npos) << e.what();
  }
  const std::string two_nodes = std::regex_replace(sharp, std::regex(R"("nodes":0)"), R"("nodes":2)");
  EXPECT_EQ(compact_from_json(two_nodes, "sharp.json").phases().size(), 1u);
  // A CollNetChain pass's chains are permutations of the local ranks: a GPU twice in one is named.
  const topo::Topology t = topo::make_preset("dgx_h100:2,gpus=2,sharp=1");
  PlanOptions one_channel;
  one_channel.channels = 1;
  const std::string chain = compact_to_json(
      require_algorithm(Collective::AllReduce, "collnet_chain")
          .compact(spec_for(t, Collective::AllReduce, 64, DType::F32, ReduceOp::Sum, 0), t, one_channel));
  ASSERT_NE(chain.find(R"("chains":[[0,1]])"), std::string::npos) << chain;
  try {
    (void)compact_from_json(
        std::regex_replace(chain, std::regex(R"("chains":\[\[0,1\]\])"), R"("chains":[[1,1]])"),
        "chain.json");
    ADD_FAILURE() << "accepted a chain with a GPU twice";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("passes[0].chains[0]"), std::string::npos) << e.what();
  }
}

// The compact checks of `s` (one lane) with its pass, a P, changed by `edit`.
template <typename P, typename Edit>
std::optional<std::string> checked_with_edited_pass(const CompactSchedule& s, Edit&& edit) {
  P pass = std::get<P>(*s.phases()[0].lanes[0].pass);
  edit(pass);
  CompactSchedule b(s.spec, s.algorithm);
  Lane lane = s.phases()[0].lanes[0];
  lane.pass = std::make_shared<const Pass>(std::move(pass));
  b.add_lane(std::move(lane));
  return check_compact(b);
}

// NVLS inside one NVLink domain is planned as its compact pass: on an NVL72 rack an 8 GiB allreduce is a few
// numbers, not the 131,328 ops of its expansion (verified op by op, O(P²) a round, until 2026-12-07), and the
// pass of each collective names the steps it runs. The preconditions refuse roles the switch cannot serve: a
// multicast of something else than the reduce wrote, a reduce source or multicast destination that is a
// member's block alone, a role in scratch, no step at all.
TEST(Compact, NvlsIsPlannedCompactWithRolesTheSwitchCanServe) {
  const topo::Topology t = topo::make_preset("gb200_nvl72:1");
  PlanOptions o;
  o.chunk_bytes = 1 << 20;
  struct Case {
    Collective collective;
    bool reduce, store;
  };
  for (const Case c : {Case{Collective::AllReduce, true, true}, Case{Collective::ReduceScatter, true, false},
                       Case{Collective::AllGather, false, true}}) {
    const CollectiveSpec spec = spec_for(t, c.collective, 1ULL << 31, DType::F32, ReduceOp::Sum, 0);
    const CompactSchedule s = require_algorithm(c.collective, "nvls").compact(spec, t, o);
    ASSERT_EQ(s.phases().size(), 1u);
    const auto* pass = std::get_if<NvlsPass>(s.phases()[0].lanes[0].pass.get());
    ASSERT_NE(pass, nullptr) << to_string(c.collective);
    EXPECT_EQ(pass_name(*s.phases()[0].lanes[0].pass), "nvls");
    EXPECT_EQ(pass->members(), 72);
    EXPECT_EQ(pass->channels(), 24);  // one Blackwell NVLink domain
    EXPECT_EQ(pass->reduce, c.reduce) << to_string(c.collective);
    EXPECT_EQ(pass->store, c.store) << to_string(c.collective);
    // Every member's rounds of every channel, each a reduce and/or a multicast.
    std::uint64_t rounds = 0;
    for (int ch = 0; ch < pass->channels(); ++ch)
      rounds += pass->rounds(ch);
    EXPECT_EQ(count_explicit_ops(s), rounds * 72 * ((c.reduce ? 1 : 0) + (c.store ? 1 : 0)));
    EXPECT_GT(count_explicit_ops(s), 60'000u);
    EXPECT_EQ(check_compact(s), std::nullopt) << to_string(c.collective);
  }
  // Rounds count from member 0's part, taken as the longest (O(1) for a loaded pass of many members).
  for (const std::uint64_t count : {0, 1, 7, 100, 1001})
    for (const int members : {2, 3, 5})
      for (const int channels : {1, 3, 4})
        for (const std::uint64_t round_elems : {0, 6, 64}) {
          NvlsPass p;
          p.member_count = members, p.channel_count = channels, p.count = count, p.round_elems = round_elems;
          for (int c = 0; c < channels; ++c) {
            std::uint64_t longest = 0;
            for (int m = 0; m < members; ++m)
              longest = std::max(longest, p.part(m, c).count);
            EXPECT_EQ(p.rounds(c), (longest + p.round(c) - 1) / p.round(c))
                << count << " on " << members << " members, channel " << c << " of " << channels;
          }
        }
  const topo::Topology small = topo::make_preset("dgx_h100:1,gpus=3");
  const CollectiveSpec spec = spec_for(small, Collective::AllReduce, 100, DType::F32, ReduceOp::Sum, 0);
  const CompactSchedule fine = require_algorithm(Collective::AllReduce, "nvls").compact(spec, small, o);
  ASSERT_EQ(check_compact(fine), std::nullopt);
  auto broken = [&](auto&& edit) {
    return checked_with_edited_pass<NvlsPass>(fine, edit).value_or("(passes)");
  };
  EXPECT_NE(broken([](NvlsPass& p) { p.store_src = RolePlace{Buffer::Input}; }).find("something else"),
            std::string::npos);
  EXPECT_NE(broken([](NvlsPass& p) { p.reduce_src.own_block_relative = true; }).find("block alone"),
            std::string::npos);
  EXPECT_NE(
      broken([](NvlsPass& p) { p.reduce_dst = p.store_src = RolePlace{Buffer::Scratch}; }).find("scratch"),
      std::string::npos);
  EXPECT_NE(broken([](NvlsPass& p) { p.reduce = p.store = false; }).find("neither"), std::string::npos);
  EXPECT_NE(broken([](NvlsPass& p) { p.channel_count = 0; }).find("0 channels"), std::string::npos);
}

// The preconditions refuse a CollNetChain pass whose chains do not cover its channels or local ranks.
TEST(Compact, RejectsBrokenChains) {
  const topo::Topology t = topo::make_preset("dgx_h100:2,gpus=3,sharp=1");
  PlanOptions o;
  o.channels = 2;
  const CompactSchedule s =
      require_algorithm(Collective::AllReduce, "collnet_chain")
          .compact(spec_for(t, Collective::AllReduce, 96, DType::F32, ReduceOp::Sum, 0), t, o);
  ASSERT_EQ(check_compact(s), std::nullopt);
  auto broken = [&](auto&& edit) { return checked_with_edited_pass<SharpPass>(s, edit); };
  const auto fewer = broken([](SharpPass& p) { p.chains.pop_back(); });
  ASSERT_TRUE(fewer.has_value());
  EXPECT_NE(fewer->find("has 1 chains"), std::string::npos) << *fewer;
  const auto twice = broken([](SharpPass& p) { p.chains[1] = {2, 2, 0}; });
  ASSERT_TRUE(twice.has_value());
  EXPECT_NE(twice->find("chain 1 is not a permutation"), std::string::npos) << *twice;
}

}  // namespace
}  // namespace cclab
