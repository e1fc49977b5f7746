#include "engine/plan/nvls_allreduce.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "engine/model/protocol.hpp"

namespace cclab::planners {

Schedule nvls_allreduce(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "nvls");
  const int world = spec.world_size;
  auto in = [](ElemRange e) { return Chunk{Buffer::Input, e.offset, e.count}; };
  auto out = [](ElemRange e) { return Chunk{Buffer::Output, e.offset, e.count}; };
  if (world == 1) {
    ProgramBuilder(s.ranks[0]).copy(in({0, spec.count}), out({0, spec.count}));
    return s;
  }
  constexpr int kGroup = 0;  // member 0 names the group
  for (int c = 0; c < std::max(1, channels); ++c) {
    const ElemRange part = partition(ElemRange{0, spec.count}, std::max(1, channels), c);
    if (part.count == 0) continue;
    const std::uint64_t round = chunk_elems == 0 ? part.count : std::max<std::uint64_t>(chunk_elems, world);
    for (std::uint64_t at = 0; at < part.count; at += round) {
      const ElemRange piece{part.offset + at, std::min(round, part.count - at)};
      for (int r = 0; r < world; ++r) {
        ProgramBuilder b(s.ranks[r]);
        const ElemRange slice = partition(piece, world, r);
        const OpId reduced = b.switch_reduce(kGroup, c, in(slice), out(slice));
        b.switch_store(kGroup, c, out(slice), out(slice), {reduced});
      }
    }
  }
  return s;
}

std::optional<std::string> nvls_unsupported(const topo::Topology& t, int world) {
  const std::optional<topo::GpuArch> arch = t.gpu_arch();
  if (!arch || nvls_efficiency(*arch) <= 0) {
    return fmt::format(
        "NVLS needs GPUs with in-switch reduction (Hopper or later; the topology's gpu_arch is {})",
        arch ? to_string(*arch) : std::string_view("not set"));
  }
  std::optional<topo::VertexId> common;
  for (int r = 0; r < world; ++r) {
    const std::optional<std::size_t> port = topo::nvswitch_port(t, t.gpus().at(r));
    if (!port) return fmt::format("GPU {} has no NVSwitch port", t.vertex(t.gpus()[r]).name);
    const topo::Link& link = t.link(*port);
    const topo::VertexId sw = link.a == t.gpus()[r] ? link.b : link.a;
    if (common && *common != sw) {
      return fmt::format(
          "GPUs {} and {} hang off different NVSwitches: NVLS reduces inside one NVLink domain "
          "(NCCL's NVLSTree across nodes is not planned yet)",
          t.vertex(t.gpus()[0]).name, t.vertex(t.gpus()[r]).name);
    }
    common = sw;
  }
  return std::nullopt;
}

}  // namespace cclab::planners
