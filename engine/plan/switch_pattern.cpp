#include "engine/plan/switch_pattern.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "engine/model/protocol.hpp"

namespace cclab::planners {

CompactSchedule switch_pattern(const CollectiveSpec& spec, std::string algorithm, NvlsPass roles,
                               int channels, std::uint64_t round_elems) {
  roles.member_count = spec.world_size;
  roles.channel_count = std::max(1, channels);
  roles.count = spec.count;
  roles.round_elems = round_elems;
  return one_lane(spec, std::move(algorithm), std::move(roles));
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
