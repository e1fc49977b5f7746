#include "engine/plan/nvls_allreduce.hpp"

#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

Schedule nvls_allreduce(const CollectiveSpec& spec, int channels, std::uint64_t round_elems) {
  return switch_pattern(spec, "nvls", SwitchRoles{}, channels, round_elems);
}

}  // namespace cclab::planners
