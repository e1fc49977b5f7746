#include "engine/plan/halving_doubling_allreduce.hpp"
#include "engine/model/lower_bound.hpp"

#include <vector>

namespace cclab::planners {

Schedule halving_doubling_allreduce(const CollectiveSpec& spec) {
  Schedule s = empty_schedule(spec, "halving_doubling");
  const int world = spec.world_size;
  const HalvingDoublingLayout layout(world);
  const int pow2 = layout.pow2;
  const int extra = layout.extra;  // ranks 0..2*extra-1 pair up before and after
  const ElemRange all{0, spec.count};
  auto in = [](ElemRange e) { return Chunk{Buffer::Input, e.offset, e.count}; };
  auto out = [](ElemRange e) { return Chunk{Buffer::Output, e.offset, e.count}; };
  auto rank_of = [&](int v) { return layout.rank_of(v); };

  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    if (world == 1) {
      b.copy(in(all), out(all));
      continue;
    }
    if (r < 2 * extra && r % 2 == 0) {  // hands its data to r+1 and gets the result back
      const OpId sent = b.send(r + 1, 0, in(all));
      b.recv(r + 1, 0, out(all), {sent});
      continue;
    }
    const int v = r < 2 * extra ? r / 2 : r - extra;
    OpId last_write = kNoOp;
    Chunk (*source)(ElemRange) = +[](ElemRange e) { return Chunk{Buffer::Input, e.offset, e.count}; };
    if (r < 2 * extra) {
      last_write = b.recv_reduce(r - 1, 0, in(all), out(all));
      source = +[](ElemRange e) { return Chunk{Buffer::Output, e.offset, e.count}; };
    }
    // Recursive halving: keep the half on this side of the mask bit, send the other half to the partner.
    std::vector<ElemRange> kept{all};
    std::vector<OpId> half_sends;
    for (int mask = pow2 / 2; mask >= 1; mask /= 2) {
      const int partner = rank_of(v ^ mask);
      const ElemRange range = kept.back();
      const ElemRange low = partition(range, 2, 0), high = partition(range, 2, 1);
      const bool keep_low = (v & mask) == 0;
      const ElemRange keep = keep_low ? low : high, give = keep_low ? high : low;
      half_sends.push_back(b.send(partner, 0, source(give), {last_write}));
      last_write = b.recv_reduce(partner, 0, source(keep), out(keep), {last_write});
      source = +[](ElemRange e) { return Chunk{Buffer::Output, e.offset, e.count}; };
      kept.push_back(keep);
    }
    // Recursive doubling: swap the kept halves back, widest last.
    OpId last_recv = last_write, last_send = kNoOp;
    for (int level = static_cast<int>(half_sends.size()) - 1, mask = 1; level >= 0; --level, mask *= 2) {
      const int partner = rank_of(v ^ mask);
      const ElemRange mine = kept[level + 1], parent = kept[level];
      const ElemRange theirs = mine.offset == parent.offset
                                   ? ElemRange{mine.end(), parent.end() - mine.end()}
                                   : ElemRange{parent.offset, mine.offset - parent.offset};
      last_send = b.send(partner, 0, out(mine), {last_recv});
      // The partner's half overwrites what this rank sent away while halving: wait for that send.
      last_recv = b.recv(partner, 0, out(theirs), {half_sends[level], last_recv});
    }
    if (r < 2 * extra) b.send(r - 1, 0, out(all), {last_send, last_recv});
  }
  return s;
}

Algorithm halving_doubling_allreduce_algorithm() {
  return Algorithm{.name = "halving_doubling",
                   .collective = Collective::AllReduce,
                   .description = "Rabenseifner recursive halving + doubling, any world size",
                   .supports = any_world,
                   .compact = [](const CollectiveSpec& s, const topo::Topology&,
                                 const PlanOptions&) { return explicit_plan(halving_doubling_allreduce(s)); },
                   .default_channels = [](const CollectiveSpec&, const topo::Topology&) { return 1; },
                   .unplanned_bound = halving_doubling_lower_bound_s};
}

}  // namespace cclab::planners
