#include "engine/plan/nvls_allgather.hpp"

#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_allgather(const CollectiveSpec& spec, int channels, std::uint64_t round_elems) {
  NvlsPass roles;
  roles.reduce = false;
  roles.store_src = RolePlace{Buffer::Input, /*own_block_relative=*/true};  // the input holds the block
  return switch_pattern(spec, "nvls", roles, channels, round_elems);
}

Algorithm nvls_allgather_algorithm() {
  return Algorithm{.name = "nvls",
                   .collective = Collective::AllGather,
                   .description = "NVLink SHARP: each GPU's block multicast by the NVSwitch",
                   .supports = one_nvlink_domain,
                   .compact =
                       [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
                         return nvls_allgather(s, channels_or(o, nvls_channels(s, t)), nvls_round_of(o, s));
                       },
                   .default_channels = nvls_channels,
                   .nccl = NcclAlgo::Nvls};
}

}  // namespace cclab::planners
