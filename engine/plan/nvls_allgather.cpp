#include "engine/plan/nvls_allgather.hpp"

#include "engine/plan/switch_pattern.hpp"

namespace cclab::planners {

CompactSchedule nvls_allgather(const CollectiveSpec& spec, int channels, std::uint64_t round_elems) {
  NvlsPass roles;
  roles.reduce = false;
  roles.store_src = RolePlace{Buffer::Input, /*own_block_relative=*/true};  // the input holds the block
  return switch_pattern(spec, "nvls", roles, channels, round_elems);
}

}  // namespace cclab::planners
