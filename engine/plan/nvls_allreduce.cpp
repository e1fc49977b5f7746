#include "engine/plan/nvls_allreduce.hpp"

#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_allreduce(const CollectiveSpec& spec, int channels, std::uint64_t round_elems) {
  return switch_pattern(spec, "nvls", NvlsPass{}, channels, round_elems);
}

}  // namespace cclab::planners
