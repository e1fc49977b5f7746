#include "engine/plan/nvls_allreduce.hpp"

#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_allreduce(const CollectiveSpec& spec, int channels, std::uint64_t round_elems) {
  return switch_pattern(spec, "nvls", NvlsPass{}, channels, round_elems);
}

Algorithm nvls_allreduce_algorithm() {
  return Algorithm{
      .name = "nvls",
      .collective = Collective::AllReduce,
      .description =
          "NVLink SHARP: reduction and multicast inside the NVSwitch (one NVLink domain, Hopper or later)",
      .supports = one_nvlink_domain,
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return nvls_allreduce(s, channels_or(o, nvls_channels(s, t)), nvls_round_of(o, s));
          },
      .default_channels = nvls_channels,
      .nccl = NcclAlgo::Nvls};
}

}  // namespace cclab::planners
