#include "engine/plan/nvls_reduce_scatter.hpp"

#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_reduce_scatter(const CollectiveSpec& spec, int channels, std::uint64_t round_elems) {
  NvlsPass roles;
  roles.store = false;
  roles.reduce_dst = RolePlace{Buffer::Output, /*own_block_relative=*/true};  // the output holds the block
  return switch_pattern(spec, "nvls", roles, channels, round_elems);
}

}  // namespace cclab::planners
