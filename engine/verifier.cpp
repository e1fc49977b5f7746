#include "engine/verifier.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory_resource>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/progress.hpp"

namespace cclab {
namespace {

// Symbolic content of a run of elements: element x holds the sum over a set S of ranks of input_s[x + delta].
// S is kept as (number of members, sum of per-rank 64-bit random weights), so a double-counted rank, a
// missing rank or a swapped one changes the fingerprint (false acceptance needs a 64-bit collision).
struct Sym {
  std::uint64_t weight_sum = 0;
  std::uint32_t members = 0;  // 0: undefined
  bool poisoned = false;      // combined misaligned data, or combined with undefined data
  std::int64_t delta = 0;

  bool operator==(const Sym&) const = default;
};

std::uint64_t rank_weight(int rank) {  // splitmix64
  std::uint64_t z = static_cast<std::uint64_t>(rank) + 0x9e3779b97f4a7c15ULL * 7;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Sym combine(const Sym& a, const Sym& b) {
  if (a.poisoned || b.poisoned || a.members == 0 || b.members == 0 || a.delta != b.delta)
    return Sym{.poisoned = true};
  return Sym{a.weight_sum + b.weight_sum, a.members + b.members, false, a.delta};
}

// A run of `length` elements with one symbolic value, delta relative to the run's first element position.
struct Piece {
  std::uint64_t length;
  Sym value;  // delta: element at (run start + i) of the source holds input[start + i + delta]
};

struct Region {
  int storage;
  std::uint64_t lo, hi;
};

// Most reads and writes cover one run; keep them off the heap.
using Pieces = std::vector<Piece>;

// One storage array of one rank, as an interval map from start to (end, value). Adjacent equal runs merge.
class SymBuffer {
 public:
  explicit SymBuffer(std::pmr::memory_resource* pool = std::pmr::get_default_resource()) : runs_(pool) {}

  void assign_all(std::uint64_t size, Sym value) {
    runs_.clear();
    if (size > 0) runs_[0] = Run{size, value};
  }

  // Pieces covering [lo, lo + n), deltas expressed so that moving a piece to position p keeps meaning when
  // the caller adds (lo - p) to delta.
  Pieces read(std::uint64_t lo, std::uint64_t n) const {
    Pieces out;
    const std::uint64_t hi = lo + n;
    std::uint64_t at = lo;
    auto it = runs_.upper_bound(lo);
    if (it != runs_.begin()) --it;
    while (at < hi) {
      if (it == runs_.end() || it->first > at) {
        const std::uint64_t gap_end = it == runs_.end() ? hi : std::min(hi, it->first);
        out.push_back(Piece{gap_end - at, Sym{}});
        at = gap_end;
        continue;
      }
      const std::uint64_t end = std::min(hi, it->second.end);
      if (end > at) {
        out.push_back(Piece{end - at, it->second.value});
        at = end;
      }
      ++it;
    }
    return out;
  }

  void write(std::uint64_t lo, const Pieces& pieces) {
    std::uint64_t total = 0;
    for (const Piece& p : pieces)
      total += p.length;
    if (total == 0) return;
    const std::uint64_t hi = lo + total;
    split_at(lo);
    split_at(hi);
    runs_.erase(runs_.lower_bound(lo), runs_.lower_bound(hi));
    std::uint64_t at = lo;
    for (const Piece& p : pieces) {
      if (p.value.members != 0 || p.value.poisoned) runs_[at] = Run{at + p.length, p.value};
      at += p.length;
    }
    merge_around(lo, hi);
  }

  std::size_t runs() const { return runs_.size(); }

 private:
  struct Run {
    std::uint64_t end;
    Sym value;
  };

  void split_at(std::uint64_t x) {
    auto it = runs_.upper_bound(x);
    if (it == runs_.begin()) return;
    --it;
    if (it->first < x && it->second.end > x) {
      Run tail{it->second.end, it->second.value};
      it->second.end = x;
      runs_[x] = tail;
    }
  }

  void merge_around(std::uint64_t lo, std::uint64_t hi) {
    auto it = runs_.lower_bound(lo);
    if (it != runs_.begin()) --it;
    while (it != runs_.end() && it->first <= hi) {
      auto next = std::next(it);
      if (next != runs_.end() && it->second.end == next->first && it->second.value == next->second.value) {
        it->second.end = next->second.end;
        runs_.erase(next);
      } else {
        it = next;
      }
    }
  }

  std::pmr::map<std::uint64_t, Run> runs_;
};

// Re-expresses pieces read at `from` for writing at `to`: delta is relative to absolute positions.
void move_pieces(Pieces& pieces, std::uint64_t from, std::uint64_t to) {
  const std::int64_t shift = static_cast<std::int64_t>(from) - static_cast<std::int64_t>(to);
  for (Piece& p : pieces)
    if (p.value.members != 0 && !p.value.poisoned) p.value.delta += shift;
}

Pieces combine_pieces(const Pieces& a, const Pieces& b) {
  Pieces out;
  std::size_t i = 0, j = 0;
  std::uint64_t used_a = 0, used_b = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t n = std::min(a[i].length - used_a, b[j].length - used_b);
    if (n > 0) out.push_back(Piece{n, combine(a[i].value, b[j].value)});
    used_a += n, used_b += n;
    if (used_a == a[i].length) ++i, used_a = 0;
    if (used_b == b[j].length) ++j, used_b = 0;
  }
  return out;
}

// Storage arrays of a rank: input and output (aliased in place), and scratch.
enum Storage : int { kInputStorage = 0, kOutputStorage = 1, kScratchStorage = 2 };

// Where a chunk of rank `rank` lives. In place, everything lives in the output storage; reduce_scatter's
// output sits inside its input and allgather's input inside its output.
Region region_of(const CollectiveSpec& spec, bool in_place, int rank, const Chunk& c) {
  if (c.buffer == Buffer::Scratch) return {kScratchStorage, c.offset, c.end()};
  if (!in_place) return {c.buffer == Buffer::Input ? kInputStorage : kOutputStorage, c.offset, c.end()};
  std::uint64_t shift = 0;
  if (spec.collective == Collective::ReduceScatter && c.buffer == Buffer::Output)
    shift = in_place_offset(spec, rank);
  if (spec.collective == Collective::AllGather && c.buffer == Buffer::Input)
    shift = in_place_offset(spec, rank);
  return {kOutputStorage, c.offset + shift, c.end() + shift};
}

// Data races within one rank. Two ops of a rank that touch overlapping elements, at least one of them
// writing, must be ordered by the rank's own dependencies (one a transitive dep of the other): channel order
// orders starts, not completions, and any other order is an accident of timing. (The progress walk alone
// cannot see this: it follows one interleaving, and a race shows only in another — fuzz/schedule_json_fuzz
// found a schedule the walk passed that computed a wrong sum.)
//
// Ops are visited in a topological order of the deps; each element range remembers its last writer and the
// readers since. A new op must descend from that writer (and, when it writes, from those readers); earlier
// accesses are then ordered by transitivity, so each op is checked against a few accessors only.
class RaceCheck {
 public:
  RaceCheck(const Schedule& s, bool in_place) : s_(s), in_place_(in_place) {}

  std::optional<std::string> run() {
    for (int r = 0; r < s_.spec.world_size; ++r)
      if (auto e = check_rank(r)) return e;
    return std::nullopt;
  }

 private:
  struct Segment {
    std::uint64_t hi;
    OpId writer = kNoOp;
    std::vector<OpId> readers;  // since the writer
  };
  using Segments = std::map<std::uint64_t, Segment>;  // by lo; disjoint

  std::optional<std::string> check_rank(int rank) {
    const Program& p = s_.ranks[rank];
    const std::size_t n = p.ops.size();
    // Topological order (Kahn, lowest index first so that program order is kept where deps allow).
    order_.clear();
    position_.assign(n, 0);
    std::vector<std::uint32_t> waiting(n, 0);
    std::vector<std::vector<OpId>> dependents(n);
    for (OpId i = 0; i < n; ++i)
      for (OpId d : p.deps_of(p.ops[i]))
        ++waiting[i], dependents[d].push_back(i);
    std::vector<OpId> ready;
    for (OpId i = n; i-- > 0;)
      if (waiting[i] == 0) ready.push_back(i);
    while (!ready.empty()) {
      const OpId i = ready.back();
      ready.pop_back();
      position_[i] = static_cast<std::uint32_t>(order_.size());
      order_.push_back(i);
      for (OpId j : dependents[i])
        if (--waiting[j] == 0) ready.push_back(j);
    }
    if (order_.size() != n) return std::nullopt;  // a cycle: check_structure reports it
    visited_.assign(n, 0);
    epoch_ = 0;
    std::array<Segments, 3> storage;
    for (OpId b : order_) {
      const Op& op = p.ops[b];
      if (reads_src(op.kind) && op.src.count > 0) {
        const Region g = region_of(s_.spec, in_place_, rank, op.src);
        if (auto e = access(rank, storage[g.storage], g, b, /*write=*/false)) return e;
      }
      if (writes_dst(op.kind) && op.dst.count > 0) {
        const Region g = region_of(s_.spec, in_place_, rank, op.dst);
        if (auto e = access(rank, storage[g.storage], g, b, /*write=*/true)) return e;
      }
    }
    return std::nullopt;
  }

  // Splits the segment containing `at` (if any) so that a segment starts there.
  static void split_at(Segments& segments, std::uint64_t at) {
    auto it = segments.upper_bound(at);
    if (it == segments.begin()) return;
    --it;
    if (it->first == at || it->second.hi <= at) return;
    Segment right = it->second;
    it->second.hi = at;
    segments.emplace(at, std::move(right));
  }

  std::optional<std::string> access(int rank, Segments& segments, const Region& g, OpId b, bool write) {
    split_at(segments, g.lo);
    split_at(segments, g.hi);
    // Fill the gaps of [lo, hi) with untouched segments, then check and update every segment inside.
    std::uint64_t at = g.lo;
    for (auto it = segments.lower_bound(g.lo); at < g.hi;) {
      if (it == segments.end() || it->first > at) {
        const std::uint64_t end = it == segments.end() ? g.hi : std::min(g.hi, it->first);
        it = segments.emplace_hint(it, at, Segment{end, kNoOp, {}});
      }
      Segment& seg = it->second;
      if (seg.writer != kNoOp && seg.writer != b && !descends(rank, b, seg.writer))
        return race(rank, b, seg.writer);
      if (write) {
        for (OpId reader : seg.readers)
          if (reader != b && !descends(rank, b, reader)) return race(rank, b, reader);
        seg.writer = b;
        seg.readers.clear();
      } else if (seg.readers.empty() || seg.readers.back() != b) {
        seg.readers.push_back(b);
      }
      at = seg.hi;
      ++it;
    }
    return std::nullopt;
  }

  // Whether `a` is a transitive dep of `b`. Only ops placed after `a` in the topological order can lead to
  // it.
  bool descends(int rank, OpId b, OpId a) {
    const Program& p = s_.ranks[rank];
    ++epoch_;
    stack_.assign(1, b);
    while (!stack_.empty()) {
      const OpId x = stack_.back();
      stack_.pop_back();
      for (OpId d : p.deps_of(p.ops[x])) {
        if (d == a) return true;
        if (visited_[d] == epoch_ || position_[d] < position_[a]) continue;
        visited_[d] = epoch_;
        stack_.push_back(d);
      }
    }
    return false;
  }

  std::optional<std::string> race(int rank, OpId b, OpId a) const {
    return fmt::format(
        "race: {} and {} touch the same elements, one writing, and neither depends on the other "
        "(add a dependency){}",
        format_op(s_, rank, a), format_op(s_, rank, b), in_place_ ? " (in-place)" : "");
  }

  const Schedule& s_;
  bool in_place_;
  std::vector<OpId> order_, stack_;
  std::vector<std::uint32_t> position_, visited_;
  std::uint32_t epoch_ = 0;
};

class SymbolicRun final : public ProgressHooks {
 public:
  SymbolicRun(const Schedule& s, bool in_place) : s_(s), in_place_(in_place) {
    state_.reserve(s.spec.world_size);
    for (int r = 0; r < s.spec.world_size; ++r)
      state_.emplace_back(&pool_);
    const CollectiveSpec& spec = s.spec;
    for (int r = 0; r < spec.world_size; ++r) {
      auto& st = state_[r];
      // Input element x of rank r holds input_r[x]: members {r}, delta 0.
      const Sym own{rank_weight(r), 1, false, 0};
      if (in_place_) {
        // One array holds both; its size is the larger of the two views.
        const std::uint64_t off = in_place_offset(spec, r);
        st.buffers[kOutputStorage].assign_all(0, Sym{});
        if (spec.collective == Collective::ReduceScatter) {
          st.buffers[kOutputStorage].assign_all(input_count(spec, r), own);
        } else {
          Pieces init{
              Piece{input_count(spec, r), Sym{own.weight_sum, 1, false, -static_cast<std::int64_t>(off)}}};
          st.buffers[kOutputStorage].write(off, init);
        }
      } else {
        st.buffers[kInputStorage].assign_all(input_count(spec, r), own);
      }
    }
  }

  Region region(int rank, const Chunk& c) const { return region_of(s_.spec, in_place_, rank, c); }

  Pieces read(int rank, const Chunk& c) const {
    const Region g = region(rank, c);
    auto pieces = state_[rank].buffers[g.storage].read(g.lo, c.count);
    return pieces;
  }

  void write(int rank, const Chunk& c, Pieces pieces, std::uint64_t from_position) {
    const Region g = region(rank, c);
    move_pieces(pieces, from_position, g.lo);
    state_[rank].buffers[g.storage].write(g.lo, pieces);
  }

  void on_local(int rank, OpId id) override {
    const Op& op = s_.ranks[rank].ops[id];
    auto src = read(rank, op.src);
    if (op.kind == OpKind::LocalReduce) {
      auto dst = read(rank, op.dst);
      move_pieces(src, region(rank, op.src).lo, region(rank, op.dst).lo);
      write(rank, op.dst, combine_pieces(dst, src), region(rank, op.dst).lo);
    } else {
      write(rank, op.dst, std::move(src), region(rank, op.src).lo);
    }
  }

  void on_transfer(int src_rank, OpId send_id, int dst_rank, OpId recv_id) override {
    const Op& send = s_.ranks[src_rank].ops[send_id];
    const Op& recv = s_.ranks[dst_rank].ops[recv_id];
    auto data = read(src_rank, send.src);
    const std::uint64_t from = region(src_rank, send.src).lo;
    if (recv.kind == OpKind::RecvReduce) {
      auto local = read(dst_rank, recv.src);
      const std::uint64_t local_from = region(dst_rank, recv.src).lo;
      move_pieces(data, from, local_from);
      write(dst_rank, recv.dst, combine_pieces(local, data), local_from);
    } else {
      write(dst_rank, recv.dst, std::move(data), from);
    }
  }

  std::optional<std::string> check_postcondition() const {
    const CollectiveSpec& spec = s_.spec;
    const int world = spec.world_size;
    std::uint64_t all_weights = 0;
    for (int r = 0; r < world; ++r)
      all_weights += rank_weight(r);
    const Sym reduced_all{all_weights, static_cast<std::uint32_t>(world), false, 0};
    for (int r = 0; r < world; ++r) {
      const ElemRange result = result_range(spec, r);
      if (result.count == 0) continue;
      // Expected content, as (range in output, value) parts.
      std::vector<std::pair<ElemRange, Sym>> expected;
      switch (spec.collective) {
        case Collective::AllReduce:
        case Collective::Reduce:
          expected.push_back({result, reduced_all});
          break;
        case Collective::ReduceScatter: {
          Sym v = reduced_all;
          v.delta = static_cast<std::int64_t>(partition(spec.count, world, r).offset);
          expected.push_back({result, v});
          break;
        }
        case Collective::AllGather:
          for (int b = 0; b < world; ++b) {
            const ElemRange block = partition(spec.count, world, b);
            expected.push_back(
                {block, Sym{rank_weight(b), 1, false, -static_cast<std::int64_t>(block.offset)}});
          }
          break;
        case Collective::Broadcast:
          expected.push_back({result, Sym{rank_weight(spec.root), 1, false, 0}});
          break;
      }
      for (const auto& [range, want] : expected) {
        if (range.count == 0) continue;
        const Chunk out{Buffer::Output, range.offset, range.count};
        auto pieces = read(r, out);
        move_pieces(pieces, region(r, out).lo, range.offset);
        std::uint64_t at = range.offset;
        for (const Piece& p : pieces) {
          if (!(p.value == want)) {
            return fmt::format("rank {}: output[{}, {}) {} (expected {})", r, at, at + p.length,
                               explain(p.value), explain(want));
          }
          at += p.length;
        }
      }
    }
    return std::nullopt;
  }

 private:
  std::string explain(const Sym& v) const {
    if (v.poisoned) return "combines misaligned or undefined data";
    if (v.members == 0) return "is never written";
    const int world = s_.spec.world_size;
    std::string who;
    for (int r = 0; r < world && v.members == 1; ++r)
      if (rank_weight(r) == v.weight_sum) who = fmt::format(" = rank {}'s input", r);
    return fmt::format("holds a reduction over {} of {} ranks{} shifted by {}", v.members, world, who,
                       v.delta);
  }

  struct RankState {
    explicit RankState(std::pmr::memory_resource* pool)
        : buffers{SymBuffer(pool), SymBuffer(pool), SymBuffer(pool)} {}
    std::array<SymBuffer, 3> buffers;
  };
  const Schedule& s_;
  bool in_place_;
  std::pmr::unsynchronized_pool_resource pool_;  // map nodes of every buffer: freed all at once at the end
  std::vector<RankState> state_;
};

}  // namespace

std::optional<std::string> verify(const Schedule& schedule, const VerifyOptions& options) {
  Matching matching;
  if (auto e = check_structure(schedule, matching)) return e;
  for (bool in_place : {false, true}) {
    if (in_place ? !options.in_place : !options.out_of_place) continue;
    if (auto e = RaceCheck(schedule, in_place).run()) return e;
    SymbolicRun run(schedule, in_place);
    if (auto e = walk_schedule(schedule, matching, run)) return e;
    const char* mode = in_place ? " (in-place)" : "";
    if (auto e = run.check_postcondition()) return *e + mode;
  }
  return std::nullopt;
}

void verify_or_throw(const Schedule& schedule, const VerifyOptions& options) {
  if (auto e = verify(schedule, options)) {
    throw PlanError(fmt::format("schedule '{}' fails verification: {}", schedule.algorithm, *e));
  }
}

}  // namespace cclab
