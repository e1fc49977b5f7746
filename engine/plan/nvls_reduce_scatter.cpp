#include "engine/plan/nvls_reduce_scatter.hpp"

#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_reduce_scatter(const CollectiveSpec& spec, int channels, std::uint64_t round_elems) {
  NvlsPass roles;
  roles.store = false;
  roles.reduce_dst = RolePlace{Buffer::Output, /*own_block_relative=*/true};  // the output holds the block
  return switch_pattern(spec, "nvls", roles, channels, round_elems);
}

Algorithm nvls_reduce_scatter_algorithm() {
  return Algorithm{.name = "nvls",
                   .collective = Collective::ReduceScatter,
                   .description = "NVLink SHARP: each GPU's block reduced inside the NVSwitch",
                   .supports = one_nvlink_domain,
                   .compact =
                       [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
                         return nvls_reduce_scatter(s, channels_or(o, nvls_channels(s, t)),
                                                    nvls_round_of(o, s));
                       },
                   .default_channels = nvls_channels,
                   .nccl = NcclAlgo::Nvls};
}

}  // namespace cclab::planners
