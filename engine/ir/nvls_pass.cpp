// An NVLS pass expanded for one member (the algorithms are in engine/plan/nvls_allreduce.hpp,
// nvls_reduce_scatter.hpp and nvls_allgather.hpp; engine/plan/switch_pattern.hpp has the pattern): per
// channel, round by round, the member's range reduced through the switch and/or multicast by it.
#include <algorithm>

#include "engine/ir/passes.hpp"

namespace cclab {

void expand_nvls_pass(const NvlsPass& pass, int member, Program& program, int only_channel) {
  ProgramBuilder b(program);
  if (pass.members() == 1) {  // every NVLS collective of one rank is its input
    if (pass.count > 0 && only_channel <= 0)
      b.copy({Buffer::Input, 0, pass.count}, {Buffer::Output, 0, pass.count});
    return;
  }
  constexpr int kGroup = 0;  // member 0 names the group
  const std::uint64_t own_offset = partition(pass.count, pass.members(), member).offset;
  auto place = [&](const RolePlace& role, ElemRange range) {
    return Chunk{role.buffer, range.offset - (role.own_block_relative ? own_offset : 0), range.count};
  };
  for (int c = 0; c < pass.channels(); ++c) {
    if (only_channel >= 0 && c != only_channel) continue;
    const ElemRange part = pass.part(member, c);
    const std::uint64_t per = pass.round(c), rounds = pass.rounds(c);
    for (std::uint64_t k = 0; k < rounds; ++k) {
      const std::uint64_t from = std::min(k * per, part.count);
      const ElemRange range{part.offset + from, std::min(per, part.count - from)};
      OpId reduced = kNoOp;
      if (pass.reduce)
        reduced = b.switch_reduce(kGroup, c, place(pass.reduce_src, range), place(pass.reduce_dst, range));
      if (pass.store)
        b.switch_store(kGroup, c, place(pass.store_src, range), place(pass.store_dst, range), {reduced});
    }
  }
}

std::uint64_t nvls_channel_ops(const NvlsPass& pass, int c) {
  if (pass.members() == 1) return c == 0 && pass.count > 0 ? 1 : 0;
  const unsigned __int128 total = static_cast<unsigned __int128>(pass.rounds(c)) *
                                  static_cast<std::uint64_t>(pass.members()) *
                                  ((pass.reduce ? 1u : 0u) + (pass.store ? 1u : 0u));
  return saturated_op_count(total);
}

bool nvls_channels_alike(const NvlsPass& pass, int a, int b) {
  if (pass.members() == 1) return a == b;
  if (pass.round(a) != pass.round(b) || pass.rounds(a) != pass.rounds(b)) return false;
  for (int m = 0; m < pass.members(); ++m)
    if (pass.part(m, a).count != pass.part(m, b).count) return false;
  return true;
}

}  // namespace cclab
