#include "engine/check/verifier.hpp"

#include <algorithm>
#include <array>
#include <future>
#include <map>
#include <memory_resource>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/ir/frontier.hpp"
#include "engine/ir/progress.hpp"

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
using Pieces = std::vector<Piece>;

// Appends a run, merging it into the last one when their values are equal (so that reads are maximal runs
// whichever store they come from, and error messages name whole ranges).
void append_piece(Pieces& out, std::uint64_t length, const Sym& value) {
  if (length == 0) return;
  if (!out.empty() && out.back().value == value)
    out.back().length += length;
  else
    out.push_back(Piece{length, value});
}

struct Region {
  int storage;
  std::uint64_t lo, hi;
};

// Storage arrays of a rank: input and output (aliased in place), and scratch; numbered as Buffer is, since
// resolve_aliasing (engine/ir/frontier.hpp) names a chunk's storage by the buffer that owns it.
enum Storage : int { kInputStorage = 0, kOutputStorage = 1, kScratchStorage = 2, kStorages = 3 };
static_assert(static_cast<int>(Buffer::Input) == kInputStorage &&
              static_cast<int>(Buffer::Output) == kOutputStorage &&
              static_cast<int>(Buffer::Scratch) == kScratchStorage);

// Where a chunk of rank `rank` lives.
Region region_of(const CollectiveSpec& spec, bool in_place, int rank, const Chunk& c) {
  const Chunk placed = resolve_aliasing(spec, rank, in_place, c);
  return {static_cast<int>(placed.buffer), placed.offset, placed.end()};
}

std::uint64_t storage_size(const Schedule& s, bool in_place, int rank, int storage) {
  switch (storage) {
    case kInputStorage:
      return in_place ? 0 : input_count(s.spec, rank);
    case kOutputStorage:
      return in_place ? std::max(input_count(s.spec, rank), output_count(s.spec, rank))
                      : output_count(s.spec, rank);
    default:
      return s.ranks[rank].scratch_count;
  }
}

// Per rank and storage, the sorted positions where one of the rank's op regions (or its initial content)
// begins or ends. Every region of the rank's ops starts and ends on a bound, so state kept per segment
// between two neighbouring bounds is exact for the rank's own accesses: no splitting, no search trees, one
// flat array per storage. (At 1024 ranks a ring has 32 k segments per rank; a tree of runs per buffer made
// verification take minutes.)
class Segmentation {
 public:
  Segmentation(const Schedule& s, const Matching& matching, bool in_place)
      : bounds_(static_cast<std::size_t>(s.spec.world_size)) {
    for (int r = 0; r < s.spec.world_size; ++r) {
      auto& b = bounds_[r];
      for (int k = 0; k < kStorages; ++k)
        b[k] = {0, storage_size(s, in_place, r, k)};
      if (in_place) {
        const std::uint64_t off = in_place_offset(s.spec, r);
        b[kOutputStorage].insert(b[kOutputStorage].end(), {off, off + input_count(s.spec, r)});
      }
      for (const Op& op : s.ranks[r].ops) {
        auto add = [&](const Chunk& c) {
          if (c.count == 0) return;
          const Region g = region_of(s.spec, in_place, r, c);
          b[g.storage].insert(b[g.storage].end(), {g.lo, g.hi});
        };
        if (reads_src(op.kind)) add(op.src);
        if (writes_dst(op.kind)) add(op.dst);
      }
    }
    // A switch op touches every member's buffers at its own chunk: each member gets those bounds too.
    for (const std::vector<OpRef>& instance : matching.instances) {
      for (const OpRef& x : instance) {
        const Op& op = s.ranks[x.rank].ops[x.op];
        const Chunk& remote = op.kind == OpKind::SwitchReduce ? op.src : op.dst;
        if (remote.count == 0) continue;
        for (const OpRef& m : instance) {
          const Region g = region_of(s.spec, in_place, m.rank, remote);
          auto& v = bounds_[m.rank][g.storage];
          v.insert(v.end(), {g.lo, g.hi});
        }
      }
    }
    for (int r = 0; r < s.spec.world_size; ++r) {
      for (auto& v : bounds_[r]) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        v.shrink_to_fit();
      }
    }
  }

  const std::vector<std::uint64_t>& bounds(int rank, int storage) const { return bounds_[rank][storage]; }

  // Index of the segment holding position x (x below the last bound).
  std::size_t segment(int rank, int storage, std::uint64_t x) const {
    const auto& b = bounds_[rank][storage];
    return static_cast<std::size_t>(std::upper_bound(b.begin(), b.end(), x) - b.begin()) - 1;
  }

 private:
  std::vector<std::array<std::vector<std::uint64_t>, kStorages>> bounds_;
};

// Symbolic contents as one value per segment of a Segmentation. Exact as long as every write leaves each
// segment uniform; the rank's own regions guarantee that for its ops, but data arriving from a peer whose
// content changes inside one of this rank's segments cannot be held. write() then returns false and the
// verifier falls back to RunStore.
class SegmentStore {
 public:
  SegmentStore(const Schedule& s, const Segmentation& seg) : seg_(seg), values_(s.spec.world_size) {
    for (int r = 0; r < s.spec.world_size; ++r)
      for (int k = 0; k < kStorages; ++k)
        values_[r][k].assign(std::max<std::size_t>(seg.bounds(r, k).size(), 1) - 1, Sym{});
  }

  void read(int rank, const Region& g, Pieces& out) const {
    const auto& b = seg_.bounds(rank, g.storage);
    const auto& v = values_[rank][g.storage];
    if (g.lo >= g.hi) return;
    for (std::size_t j = seg_.segment(rank, g.storage, g.lo); j + 1 < b.size() && b[j] < g.hi; ++j)
      append_piece(out, std::min(b[j + 1], g.hi) - std::max(b[j], g.lo), v[j]);
  }

  bool write(int rank, const Region& g, const Pieces& pieces) {
    const auto& b = seg_.bounds(rank, g.storage);
    auto& v = values_[rank][g.storage];
    if (g.lo >= g.hi) return true;
    std::size_t p = 0;
    std::uint64_t used = 0;  // of pieces[p]
    for (std::size_t j = seg_.segment(rank, g.storage, g.lo); j + 1 < b.size() && b[j] < g.hi; ++j) {
      const std::uint64_t lo = std::max(b[j], g.lo), hi = std::min(b[j + 1], g.hi);
      if (p == pieces.size()) return false;  // fewer elements than the region: let RunStore handle it
      const Sym first = pieces[p].value;
      bool uniform = true;
      for (std::uint64_t left = hi - lo; left > 0;) {
        if (p == pieces.size()) return false;
        const std::uint64_t n = std::min(left, pieces[p].length - used);
        uniform = uniform && pieces[p].value == first;
        left -= n, used += n;
        if (used == pieces[p].length) ++p, used = 0;
      }
      if (uniform && lo == b[j] && hi == b[j + 1])
        v[j] = first;
      else if (!(uniform && first == v[j]))
        return false;  // the segment would hold two values
    }
    return true;
  }

 private:
  const Segmentation& seg_;
  std::vector<std::array<std::vector<Sym>, kStorages>> values_;
};

// Symbolic contents as an interval map per storage from start to (end, value); adjacent equal runs merge.
// Holds any content, at a tree lookup per access: the fallback for schedules SegmentStore cannot hold.
class RunStore {
 public:
  explicit RunStore(const Schedule& s) {
    buffers_.reserve(s.spec.world_size);
    for (int r = 0; r < s.spec.world_size; ++r)
      buffers_.push_back({Runs(&pool_), Runs(&pool_), Runs(&pool_)});
  }

  void read(int rank, const Region& g, Pieces& out) const {
    const Runs& runs = buffers_[rank][g.storage];
    std::uint64_t at = g.lo;
    auto it = runs.upper_bound(g.lo);
    if (it != runs.begin()) --it;
    while (at < g.hi) {
      if (it == runs.end() || it->first > at) {
        const std::uint64_t gap_end = it == runs.end() ? g.hi : std::min(g.hi, it->first);
        append_piece(out, gap_end - at, Sym{});
        at = gap_end;
        continue;
      }
      const std::uint64_t end = std::min(g.hi, it->second.end);
      if (end > at) {
        append_piece(out, end - at, it->second.value);
        at = end;
      }
      ++it;
    }
  }

  bool write(int rank, const Region& g, const Pieces& pieces) {
    Runs& runs = buffers_[rank][g.storage];
    if (g.lo >= g.hi) return true;
    split_at(runs, g.lo);
    split_at(runs, g.hi);
    runs.erase(runs.lower_bound(g.lo), runs.lower_bound(g.hi));
    std::uint64_t at = g.lo;
    for (const Piece& p : pieces) {
      if (p.value.members != 0 || p.value.poisoned) runs[at] = Run{at + p.length, p.value};
      at += p.length;
    }
    merge_around(runs, g.lo, g.hi);
    return true;
  }

 private:
  struct Run {
    std::uint64_t end;
    Sym value;
  };
  using Runs = std::pmr::map<std::uint64_t, Run>;

  static void split_at(Runs& runs, std::uint64_t x) {
    auto it = runs.upper_bound(x);
    if (it == runs.begin()) return;
    --it;
    if (it->first < x && it->second.end > x) {
      Run tail{it->second.end, it->second.value};
      it->second.end = x;
      runs[x] = tail;
    }
  }

  static void merge_around(Runs& runs, std::uint64_t lo, std::uint64_t hi) {
    auto it = runs.lower_bound(lo);
    if (it != runs.begin()) --it;
    while (it != runs.end() && it->first <= hi) {
      auto next = std::next(it);
      if (next != runs.end() && it->second.end == next->first && it->second.value == next->second.value) {
        it->second.end = next->second.end;
        runs.erase(next);
      } else {
        it = next;
      }
    }
  }

  std::pmr::unsynchronized_pool_resource pool_;  // map nodes of every buffer: freed all at once at the end
  std::vector<std::array<Runs, kStorages>> buffers_;
};

// Re-expresses pieces read at `from` for writing at `to`: delta is relative to absolute positions.
void move_pieces(Pieces& pieces, std::uint64_t from, std::uint64_t to) {
  const std::int64_t shift = static_cast<std::int64_t>(from) - static_cast<std::int64_t>(to);
  for (Piece& p : pieces)
    if (p.value.members != 0 && !p.value.poisoned) p.value.delta += shift;
}

void combine_pieces(const Pieces& a, const Pieces& b, Pieces& out) {
  out.clear();
  std::size_t i = 0, j = 0;
  std::uint64_t used_a = 0, used_b = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t n = std::min(a[i].length - used_a, b[j].length - used_b);
    append_piece(out, n, combine(a[i].value, b[j].value));
    used_a += n, used_b += n;
    if (used_a == a[i].length) ++i, used_a = 0;
    if (used_b == b[j].length) ++j, used_b = 0;
  }
}

// Data races within one rank. Two ops of a rank that touch overlapping elements, at least one of them
// writing, must be ordered by the rank's own dependencies (one a transitive dep of the other): channel order
// orders starts, not completions, and any other order is an accident of timing. (The progress walk alone
// cannot see this: it follows one interleaving, and a race shows only in another — fuzz/schedule_json_fuzz
// found a schedule the walk passed that computed a wrong sum.)
//
// Ops are visited in a topological order of the deps; each segment remembers its last writer and the
// readers since. A new op must descend from that writer (and, when it writes, from those readers); earlier
// accesses are then ordered by transitivity, so each op is checked against a few accessors only.
class RaceCheck {
 public:
  RaceCheck(const Schedule& s, const Matching& matching, bool in_place, const Segmentation& seg)
      : s_(s), matching_(matching), in_place_(in_place), seg_(seg) {}

  std::optional<std::string> run() {
    for (int r = 0; r < s_.spec.world_size; ++r)
      if (auto e = check_rank(r)) return e;
    return std::nullopt;
  }

 private:
  static constexpr std::uint32_t kNil = ~std::uint32_t{0};
  struct Segment {
    OpId writer = kNoOp;
    std::uint32_t readers = kNil;  // list in reader_nodes_ of the readers since the writer, newest first
  };
  struct ReaderNode {
    OpId op;
    std::uint32_t next;
  };

  std::optional<std::string> check_rank(int rank) {
    const Program& p = s_.ranks[rank];
    const std::size_t n = p.ops.size();
    const std::vector<OpId> order = topological_order(p, dependents_of(p));
    if (order.size() != n) return std::nullopt;  // a cycle: check_structure reports it
    position_.resize(n);
    for (std::uint32_t k = 0; k < n; ++k)
      position_[order[k]] = k;
    visited_.assign(n, 0);
    epoch_ = 0;
    reader_nodes_.clear();
    for (int k = 0; k < kStorages; ++k)
      segments_[k].assign(std::max<std::size_t>(seg_.bounds(rank, k).size(), 1) - 1, Segment{});
    for (const OpId b : order) {
      const Op& op = p.ops[b];
      if (is_switch(op.kind)) {
        if (auto e = switch_access(rank, b)) return e;
        continue;
      }
      if (reads_src(op.kind) && op.src.count > 0)
        if (auto e = access(rank, region_of(s_.spec, in_place_, rank, op.src), b, /*write=*/false)) return e;
      if (writes_dst(op.kind) && op.dst.count > 0)
        if (auto e = access(rank, region_of(s_.spec, in_place_, rank, op.dst), b, /*write=*/true)) return e;
    }
    return std::nullopt;
  }

  // A switch instance is one op to each member: at this rank, a SwitchReduce reads every member's src chunk
  // and writes its own dst; a SwitchStore reads its own src and writes every member's dst chunk.
  std::optional<std::string> switch_access(int rank, OpId b) {
    const Op& op = s_.ranks[rank].ops[b];
    const bool reduce = op.kind == OpKind::SwitchReduce;
    for (const OpRef& m : matching_.instance_of(rank, b)) {
      const Op& member = s_.ranks[m.rank].ops[m.op];
      const Chunk& remote = reduce ? member.src : member.dst;
      if (remote.count > 0)
        if (auto e = access(rank, region_of(s_.spec, in_place_, rank, remote), b, /*write=*/!reduce))
          return e;
    }
    const Chunk& own = reduce ? op.dst : op.src;
    if (own.count > 0)
      if (auto e = access(rank, region_of(s_.spec, in_place_, rank, own), b, /*write=*/reduce)) return e;
    return std::nullopt;
  }

  std::optional<std::string> access(int rank, const Region& g, OpId b, bool write) {
    const auto& bounds = seg_.bounds(rank, g.storage);
    for (std::size_t j = seg_.segment(rank, g.storage, g.lo); bounds[j] < g.hi; ++j) {
      Segment& seg = segments_[g.storage][j];
      if (seg.writer != kNoOp && seg.writer != b && !descends(rank, b, seg.writer))
        return race(rank, b, seg.writer);
      if (write) {
        for (std::uint32_t k = seg.readers; k != kNil; k = reader_nodes_[k].next)
          if (reader_nodes_[k].op != b && !descends(rank, b, reader_nodes_[k].op))
            return race(rank, b, reader_nodes_[k].op);
        seg.writer = b;
        seg.readers = kNil;
      } else if (seg.readers == kNil || reader_nodes_[seg.readers].op != b) {
        reader_nodes_.push_back(ReaderNode{b, seg.readers});
        seg.readers = static_cast<std::uint32_t>(reader_nodes_.size() - 1);
      }
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
  const Matching& matching_;
  bool in_place_;
  const Segmentation& seg_;
  std::array<std::vector<Segment>, kStorages> segments_;
  std::vector<ReaderNode> reader_nodes_;
  std::vector<OpId> stack_;
  std::vector<std::uint32_t> position_, visited_;
  std::uint32_t epoch_ = 0;
};

// The walk with symbolic data, over one of the two stores. stop() ends the walk early when the store cannot
// hold a write (SegmentStore only); the caller then runs again over RunStore.
template <class Store>
class SymbolicRun final : public ProgressHooks {
 public:
  template <class... StoreArgs>
  SymbolicRun(const Schedule& s, bool in_place, StoreArgs&&... store_args)
      : s_(s), in_place_(in_place), store_(s, std::forward<StoreArgs>(store_args)...) {
    const CollectiveSpec& spec = s.spec;
    for (int r = 0; r < spec.world_size; ++r) {
      const std::uint64_t n = input_count(spec, r);
      if (n == 0) continue;
      // The input of rank r, where it lives (in place: inside the output storage, from lo): element x there
      // holds input_r[x - lo]: members {r}, delta -lo.
      const Region g = region_of(spec, in_place_, r, Chunk{Buffer::Input, 0, n});
      a_.assign(1, Piece{n, Sym{rank_weight(r), 1, false, -static_cast<std::int64_t>(g.lo)}});
      put(r, g, a_);
    }
  }

  bool stop() const override { return unrepresentable_; }
  // Whether the store could not hold the run's contents (the result is then meaningless).
  bool unrepresentable() const { return unrepresentable_; }

  void on_local(int rank, OpId id) override {
    const Op& op = s_.ranks[rank].ops[id];
    const Region src = region(rank, op.src), dst = region(rank, op.dst);
    read(rank, src, a_);
    move_pieces(a_, src.lo, dst.lo);
    if (op.kind == OpKind::LocalReduce) {
      read(rank, dst, b_);
      combine_pieces(b_, a_, c_);
      put(rank, dst, c_);
    } else {
      put(rank, dst, a_);
    }
  }

  void on_transfer(int src_rank, OpId send_id, int dst_rank, OpId recv_id) override {
    const Op& send = s_.ranks[src_rank].ops[send_id];
    const Op& recv = s_.ranks[dst_rank].ops[recv_id];
    const Region from = region(src_rank, send.src), to = region(dst_rank, recv.dst);
    read(src_rank, from, a_);
    move_pieces(a_, from.lo, to.lo);
    if (recv.kind == OpKind::RecvReduce) {
      const Region local = region(dst_rank, recv.src);
      read(dst_rank, local, b_);
      move_pieces(b_, local.lo, to.lo);
      combine_pieces(b_, a_, c_);
      put(dst_rank, to, c_);
    } else {
      put(dst_rank, to, a_);
    }
  }

  // All members' results are read before any is written: the instance happens at once on every member.
  void on_switch(std::span<const OpRef> members) override {
    const bool reduce = s_.ranks[members[0].rank].ops[members[0].op].kind == OpKind::SwitchReduce;
    staged_.clear();
    for (const OpRef& x : members) {
      const Op& op = s_.ranks[x.rank].ops[x.op];
      if (reduce) {
        // dst at x = (+) over members m of m's src at x's src chunk.
        const Region to = region(x.rank, op.dst);
        Pieces sum;
        for (std::size_t k = 0; k < members.size(); ++k) {
          const Region from = region(members[k].rank, op.src);
          read(members[k].rank, from, a_);
          move_pieces(a_, from.lo, to.lo);
          if (k == 0) {
            sum = a_;
          } else {
            combine_pieces(sum, a_, c_);
            sum.swap(c_);
          }
        }
        staged_.push_back({x.rank, to, std::move(sum)});
      } else {
        // Every member's dst at x's dst chunk = x's src.
        const Region from = region(x.rank, op.src);
        read(x.rank, from, a_);
        for (const OpRef& m : members) {
          const Region to = region(m.rank, op.dst);
          Pieces moved = a_;
          move_pieces(moved, from.lo, to.lo);
          staged_.push_back({m.rank, to, std::move(moved)});
        }
      }
    }
    for (const Staged& w : staged_)
      put(w.rank, w.to, w.pieces);
  }

  std::optional<std::string> check_postcondition() {
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
        case Collective::Scatter: {
          // Rank r's output is its block of the root's input.
          const auto offset = static_cast<std::int64_t>(partition(spec.count, world, r).offset);
          expected.push_back({result, Sym{rank_weight(spec.root), 1, false, offset}});
          break;
        }
        case Collective::SendRecv:
          expected.push_back({result, Sym{rank_weight((r + world - 1) % world), 1, false, 0}});
          break;
        case Collective::ReduceScatter: {
          Sym v = reduced_all;
          v.delta = static_cast<std::int64_t>(partition(spec.count, world, r).offset);
          expected.push_back({result, v});
          break;
        }
        case Collective::AllGather:
        case Collective::Gather:  // at the root: its result range is empty elsewhere
          for (int b = 0; b < world; ++b) {
            const ElemRange block = partition(spec.count, world, b);
            expected.push_back(
                {block, Sym{rank_weight(b), 1, false, -static_cast<std::int64_t>(block.offset)}});
          }
          break;
        case Collective::Broadcast:
          expected.push_back({result, Sym{rank_weight(spec.root), 1, false, 0}});
          break;
        case Collective::AllToAll:
          // Block b of the output is block r of rank b's input: output element i is input element
          // i + (r - b) · block of rank b.
          for (int b = 0; b < world; ++b) {
            const ElemRange block = alltoall_block(spec, b);
            const auto shift = static_cast<std::int64_t>(alltoall_block(spec, r).offset) -
                               static_cast<std::int64_t>(block.offset);
            expected.push_back({block, Sym{rank_weight(b), 1, false, shift}});
          }
          break;
      }
      for (const auto& [range, want] : expected) {
        if (range.count == 0) continue;
        const Region out = region(r, Chunk{Buffer::Output, range.offset, range.count});
        read(r, out, a_);
        move_pieces(a_, out.lo, range.offset);
        std::uint64_t at = range.offset;
        for (const Piece& p : a_) {
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
  Region region(int rank, const Chunk& c) const { return region_of(s_.spec, in_place_, rank, c); }

  void read(int rank, const Region& g, Pieces& out) const {
    out.clear();
    store_.read(rank, g, out);
  }

  void put(int rank, const Region& g, const Pieces& pieces) {
    if (!store_.write(rank, g, pieces)) unrepresentable_ = true;
  }

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

  const Schedule& s_;
  bool in_place_;
  Store store_;
  Pieces a_, b_, c_;  // reused across ops: a transfer allocates nothing once they have grown
  struct Staged {
    int rank;
    Region to;
    Pieces pieces;
  };
  std::vector<Staged> staged_;  // a switch instance's writes
  bool unrepresentable_ = false;
};

// Races, progress and the postcondition for one buffer mode.
std::optional<std::string> verify_mode(const Schedule& schedule, const Matching& matching, bool in_place,
                                       bool general_store) {
  const char* mode = in_place ? " (in-place)" : "";
  const Segmentation segmentation(schedule, matching, in_place);
  if (auto e = RaceCheck(schedule, matching, in_place, segmentation).run()) return e;
  if (!general_store) {
    SymbolicRun<SegmentStore> run(schedule, in_place, segmentation);
    if (!run.unrepresentable()) {
      auto e = walk_schedule(schedule, matching, run);
      if (!run.unrepresentable()) {
        if (e) return e;
        if (auto post = run.check_postcondition()) return *post + mode;
        return std::nullopt;
      }
    }
  }
  SymbolicRun<RunStore> run(schedule, in_place);
  if (auto e = walk_schedule(schedule, matching, run)) return e;
  if (auto post = run.check_postcondition()) return *post + mode;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> verify(const Schedule& schedule, const VerifyOptions& options) {
  Matching matching;
  if (auto e = check_structure(schedule, matching)) return e;
  // The two modes are independent; for large schedules the in-place one runs on a second thread. Either way
  // the out-of-place error, if any, is the one reported, as in a sequential run.
  constexpr std::size_t kParallelOps = 1 << 16;
  if (options.out_of_place && options.in_place && has_in_place_form(schedule.spec.collective) &&
      schedule.num_ops() >= kParallelOps && std::thread::hardware_concurrency() > 1) {
    auto in_place = std::async(std::launch::async,
                               [&] { return verify_mode(schedule, matching, true, options.general_store); });
    auto out_of_place = verify_mode(schedule, matching, false, options.general_store);
    auto in_place_error = in_place.get();
    return out_of_place ? out_of_place : in_place_error;
  }
  for (bool in_place : {false, true}) {
    if (in_place ? !options.in_place : !options.out_of_place) continue;
    if (in_place && !has_in_place_form(schedule.spec.collective)) continue;
    if (auto e = verify_mode(schedule, matching, in_place, options.general_store)) return e;
  }
  return std::nullopt;
}

void verify_or_throw(const Schedule& schedule, const VerifyOptions& options) {
  if (auto e = verify(schedule, options)) {
    throw PlanError(fmt::format("schedule '{}' fails verification: {}", schedule.algorithm, *e));
  }
}

}  // namespace cclab
