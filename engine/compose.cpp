#include "engine/compose.hpp"

#include <algorithm>
#include <set>

#include "common/error.hpp"

namespace cclab {

Composer::Composer(Schedule& target)
    : target_(target), phase_begin_(target.ranks.size(), 0), barrier_(target.ranks.size()) {
  for (std::size_t r = 0; r < target.ranks.size(); ++r)
    phase_begin_[r] = target.ranks[r].ops.size();
}

void Composer::next_phase() {
  for (std::size_t r = 0; r < target_.ranks.size(); ++r) {
    const Program& p = target_.ranks[r];
    const std::size_t begin = phase_begin_[r];
    if (begin == p.ops.size()) continue;  // nothing new on this rank: keep waiting for the older barrier
    std::vector<std::uint8_t> has_dependent(p.ops.size() - begin, 0);
    for (std::size_t i = begin; i < p.ops.size(); ++i)
      for (OpId d : p.deps_of(p.ops[i]))
        if (d >= begin) has_dependent[d - begin] = 1;
    barrier_[r].clear();
    for (std::size_t i = begin; i < p.ops.size(); ++i)
      if (!has_dependent[i - begin]) barrier_[r].push_back(static_cast<OpId>(i));
    phase_begin_[r] = p.ops.size();
  }
}

void Composer::append(const Schedule& sub, std::span<const int> ranks, const PlaceFn& place) {
  CCLAB_ENFORCE(static_cast<int>(ranks.size()) == sub.world_size(), "sub-schedule of {} ranks mapped onto {}",
                sub.world_size(), ranks.size());
  for (int j = 0; j < sub.world_size(); ++j) {
    const int r = ranks[static_cast<std::size_t>(j)];
    Program& dst = target_.ranks.at(r);
    const Program& src = sub.ranks[j];
    const OpId base = static_cast<OpId>(dst.ops.size());
    dst.scratch_count = std::max(dst.scratch_count, src.scratch_count);
    auto map_chunk = [&](Chunk c) {
      if (c.buffer == Buffer::Scratch) return c;  // phases run one after another, so they share scratch
      const Placement at = place(j, c.buffer);
      return Chunk{at.buffer, at.offset + c.offset, c.count};
    };
    std::set<int> channel_started;
    for (const Op& op : src.ops) {
      std::vector<OpId> deps;
      for (OpId d : src.deps_of(op))
        deps.push_back(base + d);
      // The first op on each channel (and every op without deps) waits for the previous phase.
      if (deps.empty() || !channel_started.count(op.channel))
        deps.insert(deps.end(), barrier_[r].begin(), barrier_[r].end());
      channel_started.insert(op.channel);
      Op mapped = op;
      if (is_comm(op.kind)) mapped.peer = ranks[static_cast<std::size_t>(op.peer)];
      mapped.src = map_chunk(op.src);
      mapped.dst = map_chunk(op.dst);
      dst.add(mapped, deps);
    }
  }
}

}  // namespace cclab
