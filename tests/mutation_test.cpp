// Mutation test of the verifier: random small changes to valid schedules (drop or duplicate an op, change a
// peer, shift or resize a chunk, drop a dep, swap two ops). A mutant the verifier accepts must still compute
// the right answer on the reference executor; the kill rate counts rejected mutants among those that break
// the result.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include <fmt/format.h>

#include "engine/check/verifier.hpp"
#include "engine/plan/registry.hpp"
#include "tests/harness.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

// Rewrites a program with op `order[i]` moved to position i (deps follow their ops) and `keep[old]`
// filtering.
Program rebuild(const Program& p, const std::vector<OpId>& order, const std::vector<int>& dup_after = {}) {
  std::vector<OpId> new_index(p.ops.size(), kNoOp);
  std::size_t at = 0;
  for (OpId old : order) {
    new_index[old] = static_cast<OpId>(at++);
    if (std::find(dup_after.begin(), dup_after.end(), static_cast<int>(old)) != dup_after.end()) ++at;
  }
  Program out;
  out.scratch_count = p.scratch_count;
  for (OpId old : order) {
    std::vector<OpId> deps;
    for (OpId d : p.deps_of(p.ops[old]))
      if (new_index[d] != kNoOp) deps.push_back(new_index[d]);
    out.add(p.ops[old], deps);
    if (std::find(dup_after.begin(), dup_after.end(), static_cast<int>(old)) != dup_after.end())
      out.add(p.ops[old], deps);
  }
  return out;
}

enum class Mutation { DropOp, DuplicateOp, ChangePeer, ShiftChunk, ResizeChunk, DropDep, SwapOps, kCount };
constexpr const char* kMutationNames[] = {"drop op",      "duplicate op", "change peer", "shift chunk",
                                          "resize chunk", "drop dep",     "swap ops"};

// Applies one mutation of kind m at a random place; false when the schedule offers no place for it.
bool mutate(Schedule& s, Mutation m, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::vector<int> ranks;
  for (int r = 0; r < s.world_size(); ++r)
    if (!s.ranks[r].ops.empty()) ranks.push_back(r);
  if (ranks.empty()) return false;
  Program& p = s.ranks[ranks[pick(ranks.size())]];
  const OpId i = static_cast<OpId>(pick(p.ops.size()));
  Op& op = p.ops[i];
  std::vector<OpId> order(p.ops.size());
  std::iota(order.begin(), order.end(), 0);
  switch (m) {
    case Mutation::DropOp:
      order.erase(order.begin() + i);
      p = rebuild(p, order);
      return true;
    case Mutation::DuplicateOp:
      p = rebuild(p, order, {static_cast<int>(i)});
      return true;
    case Mutation::ChangePeer: {
      if (!has_peer(op.kind) || s.world_size() < 3) return false;
      const int old = op.peer;
      while (op.peer == old)
        op.peer = static_cast<int>(pick(s.world_size()));
      return true;
    }
    case Mutation::ShiftChunk: {
      Chunk& c = (reads_src(op.kind) && (rng() & 1)) || !writes_dst(op.kind) ? op.src : op.dst;
      if (c.count == 0) return false;
      const std::uint64_t delta = 1 + pick(3);
      if ((rng() & 1) && c.offset >= delta)
        c.offset -= delta;
      else
        c.offset += delta;
      return true;
    }
    case Mutation::ResizeChunk: {
      Chunk& c = reads_src(op.kind) ? op.src : op.dst;
      if (c.count == 0) return false;
      if (rng() & 1)
        --c.count;
      else
        ++c.count;
      if (op.kind == OpKind::RecvReduce || op.kind == OpKind::Copy || op.kind == OpKind::LocalReduce ||
          is_switch(op.kind)) {
        op.src.count = op.dst.count = c.count;  // keep src and dst sizes equal, change the amount moved
      }
      return true;
    }
    case Mutation::DropDep: {
      if (op.deps_count == 0) return false;
      const std::size_t k = op.deps_begin + pick(op.deps_count);
      p.deps.erase(p.deps.begin() + static_cast<long>(k));
      --op.deps_count;
      for (Op& other : p.ops)
        if (other.deps_begin > k) --other.deps_begin;
      return true;
    }
    case Mutation::SwapOps: {
      if (p.ops.size() < 2) return false;
      const OpId j = static_cast<OpId>(pick(p.ops.size()));
      if (j == i) return false;
      std::swap(order[i], order[j]);
      p = rebuild(p, order);
      return true;
    }
    case Mutation::kCount:
      break;
  }
  return false;
}

TEST(Mutation, VerifierKillsMutantsThatBreakTheResult) {
  std::mt19937_64 rng(20261202);
  const topo::Topology flat4 = testing::flat_topology(4), flat5 = testing::flat_topology(5);
  const topo::Topology nodes = topo::make_preset("pcie_server:2,gpus=3");
  PlanOptions options;
  options.chunk_bytes = 16;
  options.channels = 2;
  std::vector<Schedule> originals;
  for (const topo::Topology* t : {&flat4, &flat5, &nodes}) {
    for (const Algorithm& a : algorithms()) {
      const int world = static_cast<int>(t->gpus().size());
      // (an alltoall's count is P equal blocks)
      const std::uint64_t count = (5ULL * world + 3) * (a.collective == Collective::AllToAll ? world : 1);
      const CollectiveSpec spec = spec_for(*t, a.collective, count, DType::F32, ReduceOp::Sum, 1);
      if (!a.supports(spec, *t, options).ok) continue;  // the hypercube on five or six ranks
      originals.push_back(a.plan(spec, *t, options));
      ASSERT_FALSE(verify(originals.back()));
    }
  }
  int mutants = 0, rejected = 0, equivalent = 0, survived = 0;
  std::vector<int> by_kind_rejected(static_cast<int>(Mutation::kCount)),
      by_kind(static_cast<int>(Mutation::kCount));
  constexpr int kMutants = 1500;
  while (mutants < kMutants) {
    Schedule s = originals[rng() % originals.size()];
    const auto kind = static_cast<Mutation>(rng() % static_cast<int>(Mutation::kCount));
    if (!mutate(s, kind, rng)) continue;
    ++mutants;
    ++by_kind[static_cast<int>(kind)];
    const auto verdict = verify(s);
    // The fast per-segment store and the general one must agree, message included.
    EXPECT_EQ(verdict, verify(s, {.general_store = true})) << kMutationNames[static_cast<int>(kind)];
    if (verdict) {
      ++rejected;
      ++by_kind_rejected[static_cast<int>(kind)];
      continue;
    }
    // Accepted: it must still be right, both ways.
    // Accepted mutants cannot deadlock (the verifier walked them), so a stall means a bug: the generous
    // timeout only keeps a loaded CI machine from looking like one.
    auto wrong = testing::run_and_check(s, false, 60);
    if (!wrong && has_in_place_form(s.spec.collective)) wrong = testing::run_and_check(s, true, 60);
    if (wrong) {
      ++survived;
      ADD_FAILURE() << "accepted a wrong mutant (" << kMutationNames[static_cast<int>(kind)] << " on "
                    << s.algorithm << "): " << *wrong;
    } else {
      ++equivalent;
    }
  }
  const double kill_rate = static_cast<double>(rejected) / std::max(1, rejected + survived);
  std::string detail;
  for (int k = 0; k < static_cast<int>(Mutation::kCount); ++k)
    detail += fmt::format("  {}: {} of {} rejected\n", kMutationNames[k], by_kind_rejected[k], by_kind[k]);
  fmt::print(
      "mutants: {}, rejected: {}, accepted and still correct: {}, accepted but wrong: {}; kill rate "
      "{:.2f}%\n{}",
      mutants, rejected, equivalent, survived, 100 * kill_rate, detail);
  EXPECT_GE(kill_rate, 0.99);
}

}  // namespace
}  // namespace cclab
