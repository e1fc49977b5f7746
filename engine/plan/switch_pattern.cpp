#include "engine/plan/switch_pattern.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "engine/model/protocol.hpp"

namespace cclab::planners {

Schedule switch_pattern(const CollectiveSpec& spec, std::string algorithm, const SwitchRoles& roles,
                        int channels, std::uint64_t round_elems) {
  Schedule s = empty_schedule(spec, std::move(algorithm));
  const int world = spec.world_size;
  if (world == 1) {  // every NVLS collective of one rank is its input
    if (spec.count > 0)
      ProgramBuilder(s.ranks[0]).copy({Buffer::Input, 0, spec.count}, {Buffer::Output, 0, spec.count});
    return s;
  }
  constexpr int kGroup = 0;  // member 0 names the group
  channels = std::max(1, channels);
  auto place = [&](const RolePlace& role, int member, ElemRange range) {
    const std::uint64_t shift = role.own_block_relative ? partition(spec.count, world, member).offset : 0;
    return Chunk{role.buffer, range.offset - shift, range.count};
  };
  for (int c = 0; c < channels; ++c) {
    std::uint64_t longest = 0;
    for (int r = 0; r < world; ++r)
      longest =
          std::max(longest, partition(partition(ElemRange{0, spec.count}, world, r), channels, c).count);
    // round_elems 0: one round per channel.
    const std::uint64_t per_member = std::max<std::uint64_t>(
        1, round_elems == 0 ? longest : round_elems / static_cast<std::uint64_t>(world));
    const std::uint64_t rounds = (longest + per_member - 1) / per_member;
    for (int r = 0; r < world; ++r) {
      ProgramBuilder b(s.ranks[r]);
      const ElemRange part = partition(partition(ElemRange{0, spec.count}, world, r), channels, c);
      for (std::uint64_t k = 0; k < rounds; ++k) {
        const std::uint64_t from = std::min(k * per_member, part.count);
        const ElemRange range{part.offset + from, std::min(per_member, part.count - from)};
        OpId reduced = kNoOp;
        if (roles.reduce)
          reduced = b.switch_reduce(kGroup, c, place(roles.reduce_src, r, range),
                                    place(roles.reduce_dst, r, range));
        if (roles.store)
          b.switch_store(kGroup, c, place(roles.store_src, r, range), place(roles.store_dst, r, range),
                         {reduced});
      }
    }
  }
  return s;
}

int nvls_domain_channels(const topo::Topology& t) {
  const std::optional<topo::GpuArch> arch = t.gpu_arch();
  const bool blackwell = arch && *arch == topo::GpuArch::Blackwell;
  return blackwell && t.num_nodes() == 1 ? 24 : kNvlsDefaultChannels;
}

std::uint64_t nvls_round_elems(std::uint64_t chunk_elems, DType dtype, int members) {
  if (chunk_elems == 0) return 0;
  const std::uint64_t nccl_chunk = std::max<std::uint64_t>(1, kNvlsChunkBytes / dtype_size_bytes(dtype));
  return std::min(chunk_elems, nccl_chunk) * static_cast<std::uint64_t>(std::max(1, members));
}

std::optional<std::string> nvls_unsupported(const topo::Topology& t) {
  const std::optional<topo::GpuArch> arch = t.gpu_arch();
  if (!arch || nvls_efficiency(*arch) <= 0) {
    return fmt::format(
        "NVLS needs GPUs with in-switch reduction (Hopper or later; the topology's gpu_arch is {})",
        arch ? to_string(*arch) : std::string_view("not set"));
  }
  std::map<int, std::pair<topo::VertexId, topo::VertexId>> domain;  // node -> (its first GPU, its NVSwitch)
  for (const topo::VertexId gpu : t.gpus()) {
    const std::optional<topo::SwitchPort> port = topo::nvswitch_port(t, gpu);
    if (!port) return fmt::format("GPU {} has no NVSwitch port", t.vertex(gpu).name);
    const auto [it, first] = domain.try_emplace(t.vertex(gpu).node, gpu, port->sw);
    if (!first && it->second.second != port->sw) {
      return fmt::format("GPUs {} and {} of one node hang off different NVSwitches",
                         t.vertex(it->second.first).name, t.vertex(gpu).name);
    }
  }
  return std::nullopt;
}

}  // namespace cclab::planners
