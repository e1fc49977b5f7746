// The IR's JSON form, its readable print, and the verifier's rejections of hand-made bad schedules.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/check/verifier.hpp"
#include "engine/ir/schedule_json.hpp"
#include "engine/plan/direct_rooted.hpp"
#include "engine/plan/pairwise_alltoall.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/ring_allreduce.hpp"
#include "engine/plan/selection.hpp"
#include "engine/plan/shift_sendrecv.hpp"
#include "tests/harness.hpp"
#include "topology/yaml_io.hpp"

namespace cclab {
namespace {

CollectiveSpec allreduce_spec(int world, std::uint64_t count) {
  CollectiveSpec spec;
  spec.world_size = world;
  spec.count = count;
  return spec;
}

Schedule ring(int world, std::uint64_t count) {
  return to_explicit(
      planners::ring_allreduce(allreduce_spec(world, count), planners::identity_rings(world, 1), 0));
}

void expect_rejected(const Schedule& s, const std::string& needle) {
  auto e = verify(s);
  ASSERT_TRUE(e) << "accepted";
  EXPECT_NE(e->find(needle), std::string::npos) << *e;
}

TEST(ScheduleJson, RoundTripKeepsEveryField) {
  const topo::Topology t = testing::flat_topology(5);
  for (const Algorithm& a : algorithms()) {
    const CollectiveSpec spec = spec_for(t, a.collective, 23, DType::BF16, ReduceOp::Max, 2);
    if (!a.supports(spec, t, PlanOptions{}).ok) continue;  // the hypercube: powers of two only
    const Schedule s = a.plan(spec, t, PlanOptions{});
    const Schedule back = schedule_from_json(schedule_to_json(s));
    EXPECT_EQ(back.spec, s.spec);
    EXPECT_EQ(back.algorithm, s.algorithm);
    EXPECT_EQ(back.params, s.params);
    EXPECT_EQ(back.lanes_per_channel, s.lanes_per_channel) << a.name;  // typed once, on load
    EXPECT_EQ(back.num_network_channels(), s.num_network_channels()) << a.name;
    EXPECT_EQ(schedule_to_json(back), schedule_to_json(s)) << a.name;
  }
  // The tree runs each network channel as two IR channels: the planner says so in a typed field, which the
  // α-β model reads (never the printed params).
  EXPECT_EQ(require_algorithm(Collective::AllReduce, "tree")
                .plan(spec_for(t, Collective::AllReduce, 23, DType::F32), t, PlanOptions{})
                .lanes_per_channel,
            2);
}

TEST(ScheduleJson, ErrorsNameTheField) {
  const std::string good = schedule_to_json(ring(3, 9));
  auto expect_error = [](const std::string& text, const std::string& field) {
    try {
      schedule_from_json(text, "p.json");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  expect_error(edit("\"peer\":1", "\"peer\":\"one\""), "p.json: ranks[0].ops[0].peer");
  expect_error(edit("\"peer\":1", "\"peer\":7"), "ranks[0].ops[0].peer");
  expect_error(edit("\"kind\":\"send\"", "\"kind\":\"teleport\""), "ranks[0].ops[0].kind");
  expect_error(edit("\"src\":[\"input\"", "\"src\":[\"cache\""), "ranks[0].ops[0].src[0]");
  expect_error(edit("\"src\":[\"input\",", "\"src\":[\"input\",-"), "ranks[0].ops[0].src[1]");
  expect_error(edit("\"world_size\":3", "\"world_size\":4"), "ranks");
  expect_error(edit("\"collective\":\"allreduce\"", "\"collective\":\"hypercube\""), "collective");
  expect_error(edit("\"params\":{", "\"params\":{\"lanes\":\"two\","), "params.lanes");
  expect_error(edit("\"channels\":\"1\"", "\"channels\":\"0\""), "params.channels");
  expect_error("{", "p.json: not valid JSON");
  expect_error(edit("\"count\":9", "\"count\":408000741590e415907"), "p.json: not valid JSON");  // fuzzer
  // An unclosed string: the parser quotes the rest of the file; the message stays short (fuzzer).
  const std::string unclosed = "{\"" + std::string(5000, 'x');
  try {
    schedule_from_json(unclosed, "p.json");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u);
    EXPECT_NE(std::string(e.what()).find("p.json: not valid JSON (byte"), std::string::npos) << e.what();
  }
}

TEST(SchedulePrint, RingInNcclForm) {
  const std::string text = format_schedule_summary(ring(4, 8));
  EXPECT_NE(text.find("channel 0: 0 1 2 3"), std::string::npos) << text;
}

TEST(Verifier, AcceptsRing) {
  EXPECT_FALSE(verify(ring(4, 10)));
}

TEST(Verifier, RemovedOpLeavesAnUnmatchedPeer) {
  Schedule s = ring(4, 8);
  s.ranks[2].ops.erase(s.ranks[2].ops.begin() + 1);
  expect_rejected(s, "rank ");
  auto e = verify(s);
  EXPECT_NE(e->find(" op "), std::string::npos) << *e;
}

TEST(Verifier, ChangedPeer) {
  Schedule s = ring(4, 8);
  s.ranks[1].ops[0].peer = 3;
  expect_rejected(s, "rank 1 op 0");
}

TEST(Verifier, ChunkOutOfBounds) {
  Schedule s = ring(4, 8);
  s.ranks[0].ops[0].src.offset = 7;
  expect_rejected(s, "outside the buffer");
}

TEST(Verifier, SizeMismatch) {
  Schedule s = ring(4, 8);
  s.ranks[0].ops[0].src.count = 1;
  expect_rejected(s, "sends 1 elements");
}

TEST(Verifier, DependencyCycle) {
  Schedule s = empty_schedule(allreduce_spec(1, 4), "cycle");
  Program& p = s.ranks[0];
  const Chunk in{Buffer::Input, 0, 4}, out{Buffer::Output, 0, 4};
  std::vector<OpId> dep1{1}, dep0{0};
  p.add(Op{OpKind::Copy, 0, -1, in, out}, dep1);
  p.add(Op{OpKind::LocalReduce, 0, -1, in, out}, dep0);
  expect_rejected(s, "cycle");
}

TEST(Verifier, Deadlock) {
  // Each rank waits for its own send to finish before receiving, but sends are rendezvous: both block.
  Schedule s = empty_schedule(allreduce_spec(2, 4), "deadlock");
  for (int r = 0; r < 2; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const OpId got = b.recv(1 - r, 0, Chunk{Buffer::Output, 0, 4});
    b.send(1 - r, 0, Chunk{Buffer::Input, 0, 4}, {got});
  }
  expect_rejected(s, "deadlock");
}

TEST(Verifier, Race) {
  // Rank 1 reduces into the output while a copy on another path overwrites it, with nothing ordering the two.
  Schedule s = empty_schedule(allreduce_spec(2, 4), "race");
  const Chunk in{Buffer::Input, 0, 4}, out{Buffer::Output, 0, 4};
  {
    ProgramBuilder b(s.ranks[0]);
    const OpId sent = b.send(1, 0, in);
    b.recv(1, 1, out, {sent});
  }
  {
    ProgramBuilder b(s.ranks[1]);
    const OpId got = b.recv_reduce(0, 0, in, out);
    b.copy(in, out);  // races with the pending receive
    b.send(0, 1, out, {got});
  }
  expect_rejected(s, "race");
}

TEST(Verifier, RaceThatOneInterleavingHides) {
  // Rank 1 forwards its output (op 2) ordered only after its first send, not after the receive that writes
  // the output (op 1): whether the receive has finished depends on timing. The verifier must reject it from
  // the deps alone, whatever order its walk happens to take (fuzz/schedule_json_fuzz found such a schedule
  // that the walk passed and the executor got wrong).
  Schedule s = empty_schedule(allreduce_spec(2, 4), "hidden-race");
  const Chunk in{Buffer::Input, 0, 4}, out{Buffer::Output, 0, 4}, scratch{Buffer::Scratch, 0, 4};
  s.ranks[0].scratch_count = 4;
  {
    ProgramBuilder b(s.ranks[0]);
    const OpId got = b.recv_reduce(1, 0, in, out);
    b.send(1, 1, out, {got});
    b.recv(1, 2, scratch);
  }
  {
    ProgramBuilder b(s.ranks[1]);
    const OpId sent = b.send(0, 0, in);
    b.recv(0, 1, out);
    b.send(0, 2, out, {sent});  // should depend on the receive above
  }
  expect_rejected(s, "neither depends on the other");
}

TEST(Verifier, WrongResult) {
  // Well-formed and deadlock-free, but rank 0 keeps only its own data.
  Schedule s = empty_schedule(allreduce_spec(2, 4), "wrong");
  const Chunk in{Buffer::Input, 0, 4}, out{Buffer::Output, 0, 4};
  ProgramBuilder(s.ranks[0]).copy(in, out);
  ProgramBuilder(s.ranks[1]).copy(in, out);
  expect_rejected(s, "rank 0: output[0, 4)");
}

// Alltoall: block b of rank r's output must be block r of rank b's input, not block b of it (what an
// allgather-like exchange of whole blocks gives) nor the rank's own block.
TEST(Verifier, AlltoallBlocks) {
  CollectiveSpec spec = allreduce_spec(3, 6);
  spec.collective = Collective::AllToAll;
  EXPECT_FALSE(verify(planners::pairwise_alltoall(spec, 2, 0)));
  EXPECT_FALSE(verify(planners::pairwise_alltoall(spec, 1, 1)));  // one channel, one element a chunk
  // Each rank sends its block of the receiver's index... from the receiver's own offset: the wrong block.
  Schedule wrong = empty_schedule(spec, "wrong_block");
  for (int r = 0; r < 3; ++r) {
    ProgramBuilder b(wrong.ranks[r]);
    b.copy({Buffer::Input, 2u * r, 2}, {Buffer::Output, 2u * r, 2});
    for (int d = 1; d < 3; ++d) {
      const int to = (r + d) % 3, from = (r - d + 3) % 3;
      b.send(to, 0, {Buffer::Input, 2u * r, 2});  // should be block `to`
      b.recv(from, 0, {Buffer::Output, 2u * from, 2});
    }
  }
  expect_rejected(wrong,
                  "rank 0: output[2, 4) holds a reduction over 1 of 3 ranks = rank 1's input shifted by 0");
  spec.count = 7;
  expect_rejected(empty_schedule(spec, "uneven"), "must be a multiple of its 3 ranks");
}

// Gather, scatter and sendrecv: the planners' schedules pass; the wrong block at the root, a ring shifted
// the wrong way, or an unsent block fail, each named.
TEST(Verifier, PointToPointCollectives) {
  CollectiveSpec spec = allreduce_spec(4, 10);  // uneven blocks: 3, 3, 2, 2
  spec.root = 1;
  for (Collective c : {Collective::Gather, Collective::Scatter, Collective::SendRecv}) {
    spec.collective = c;
    const Schedule planned = c == Collective::Gather    ? planners::direct_gather(spec, 2, 1)
                             : c == Collective::Scatter ? planners::direct_scatter(spec, 3, 0)
                                                        : planners::shift_sendrecv(spec, 2, 2);
    EXPECT_FALSE(verify(planned)) << to_string(c);
  }
  // Scatter: the root sends every rank block 0.
  spec.collective = Collective::Scatter;
  Schedule scatter = empty_schedule(spec, "wrong_block");
  for (int r = 0; r < 4; ++r) {
    const ElemRange block = partition(10, 4, r);
    ProgramBuilder b(scatter.ranks[r]);
    if (r == 1) {
      b.copy({Buffer::Input, block.offset, block.count}, {Buffer::Output, 0, block.count});
      for (int q : {0, 2, 3})
        b.send(q, 0, {Buffer::Input, 0, partition(10, 4, q).count});
    } else {
      b.recv(1, 0, {Buffer::Output, 0, block.count});
    }
  }
  expect_rejected(scatter,
                  "rank 2: output[0, 2) holds a reduction over 1 of 4 ranks = rank 1's input shifted by 0");
  // Sendrecv: each rank receives from the next instead of the previous.
  spec.collective = Collective::SendRecv;
  Schedule backwards = empty_schedule(spec, "backwards");
  for (int r = 0; r < 4; ++r) {
    ProgramBuilder b(backwards.ranks[r]);
    b.send((r + 3) % 4, 0, {Buffer::Input, 0, 10});
    b.recv((r + 1) % 4, 0, {Buffer::Output, 0, 10});
  }
  expect_rejected(backwards, "rank 0: output[0, 10) holds a reduction over 1 of 4 ranks = rank 1's input");
  // Gather: rank 3's block never arrives.
  spec.collective = Collective::Gather;
  Schedule missing = planners::direct_gather(spec, 1, 0);
  missing.ranks[3].ops.clear();
  Program& root = missing.ranks[1];
  root.ops.erase(std::remove_if(root.ops.begin(), root.ops.end(), [](const Op& op) { return op.peer == 3; }),
                 root.ops.end());
  expect_rejected(missing, "rank 1: output[8, 10) is never written");
}

// Node indices in a topology file need not be dense. fuzz/topology_yaml_fuzz found that a vertex on node
// 88888888 made the planners loop over every index below it; at INT_MAX, counting nodes overflowed.
TEST(Planners, SparseNodeIndices) {
  std::string text = "name: sparse\nvertices:\n  - {name: sw, kind: switch}\n";
  std::string links = "links:\n";
  for (const char* node : {"7", "2147483647"}) {
    for (int local = 0; local < 2; ++local) {
      const std::string name = fmt::format("n{}.gpu{}", node, local);
      text += fmt::format("  - {{name: {}, kind: gpu, node: {}, local_rank: {}}}\n", name, node, local);
      links +=
          fmt::format("  - {{from: {}, to: sw, kind: infiniband, bandwidth: 25GB/s, latency: 1us}}\n", name);
    }
  }
  const topo::Topology t = topo::parse_topology_yaml(text + links);
  EXPECT_EQ(t.num_nodes(), 2);
  EXPECT_EQ(planners::node_groups(t), (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 1001, DType::F32);
  int planned = 0;
  for (const Algorithm* a : algorithms_for(Collective::AllReduce)) {
    const Planned p = plan_collective(spec, t, a->name);
    if (!p.schedule) continue;
    ++planned;
    EXPECT_EQ(verify(*p.schedule), std::nullopt) << a->name;
  }
  EXPECT_GE(planned, 4);
}

// A 3-rank allgather (one element per block) where rank 0 forwards blocks 0 and 1 to rank 2 as one message.
// Rank 2 touches [0, 2) only as a whole, so its own ops give it one segment there, yet the data arriving
// holds two different blocks: the verifier's per-segment store cannot hold it and must fall back to the
// general one. `forward_own_twice` breaks the schedule: rank 0 puts its own block where rank 1's belongs.
Schedule allgather_forwarding_two_blocks(bool forward_own_twice) {
  CollectiveSpec spec;
  spec.collective = Collective::AllGather;
  spec.world_size = 3;
  spec.count = 3;
  Schedule s = empty_schedule(spec, "forward-two-blocks");
  const Chunk in{Buffer::Input, 0, 1};
  auto out = [](std::uint64_t lo, std::uint64_t n) { return Chunk{Buffer::Output, lo, n}; };
  {
    ProgramBuilder b(s.ranks[0]);
    const OpId own = b.copy(in, out(0, 1));
    const OpId second = forward_own_twice ? b.copy(in, out(1, 1)) : b.recv(1, 0, out(1, 1));
    b.send(2, 0, out(0, 2), {own, second});
    b.send(1, 0, out(0, 1), {own});
    b.recv(2, 0, out(2, 1));
  }
  {
    ProgramBuilder b(s.ranks[1]);
    const OpId own = b.copy(in, out(1, 1));
    if (!forward_own_twice) b.send(0, 0, out(1, 1), {own});
    b.recv(0, 0, out(0, 1));
    b.recv(2, 0, out(2, 1));
  }
  {
    ProgramBuilder b(s.ranks[2]);
    b.recv(0, 0, out(0, 2));
    const OpId own = b.copy(in, out(2, 1));
    b.send(0, 0, out(2, 1), {own});
    b.send(1, 0, out(2, 1), {own});
  }
  return s;
}

TEST(Verifier, PeerDataThatSplitsASegment) {
  const Schedule good = allgather_forwarding_two_blocks(false);
  EXPECT_EQ(verify(good), std::nullopt);
  EXPECT_EQ(verify(good, {.general_store = true}), std::nullopt);
  EXPECT_EQ(testing::run_and_check(good, false), std::nullopt);
  EXPECT_EQ(testing::run_and_check(good, true), std::nullopt);

  const Schedule bad = allgather_forwarding_two_blocks(true);
  expect_rejected(bad, "rank 0: output[1, 2) holds a reduction over 1 of 3 ranks = rank 0's input");
  EXPECT_EQ(verify(bad), verify(bad, {.general_store = true}));
}

}  // namespace
}  // namespace cclab

// The Chrome trace of a run parses as JSON, has one X event per op plus one name per rank, and keeps times.
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/ir/trace.hpp"
#include "engine/model/cost.hpp"

namespace cclab {
namespace {

TEST(ChromeTrace, OneEventPerOpWithTimes) {
  const topo::Topology t = testing::flat_topology(4);
  const Schedule s = ring(4, 64);
  const RunResult run = estimate_cost(s, t);
  std::ostringstream out;
  write_chrome_trace(s, run, out, TraceOptions{"alpha-beta", 0});
  const auto doc = nlohmann::json::parse(out.str());
  ASSERT_TRUE(doc.is_array());
  std::size_t events = 0, names = 0;
  double last_end_us = 0;
  for (const auto& e : doc) {
    if (e["ph"] == "M") {
      ++names;
      continue;
    }
    ASSERT_EQ(e["ph"], "X");
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    last_end_us = std::max(last_end_us, e["ts"].get<double>() + e["dur"].get<double>());
    ++events;
  }
  EXPECT_EQ(names, 4u);
  EXPECT_EQ(events, s.num_ops());
  EXPECT_NEAR(last_end_us, run.total_s * 1e6, 0.01);
}

}  // namespace
}  // namespace cclab
