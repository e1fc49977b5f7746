#include "engine/ir/passes.hpp"

#include <cstdint>

namespace cclab {

int chunk_rounds(std::uint64_t largest_block, std::uint64_t chunk_elems) {
  if (chunk_elems == 0 || largest_block <= chunk_elems) return 1;
  return static_cast<int>((largest_block + chunk_elems - 1) / chunk_elems);
}

void expand_pass(const Pass& pass, int member, Program& program) {
  if (const auto* ring = std::get_if<RingPass>(&pass)) return expand_ring_pass(*ring, member, program);
  if (const auto* tree = std::get_if<TreePass>(&pass)) return expand_tree_pass(*tree, member, program);
  program = std::get<ExplicitPass>(pass).programs.ranks.at(member);
}

std::uint64_t pass_op_count(const Pass& pass) {
  if (const auto* ring = std::get_if<RingPass>(&pass)) {
    const std::uint64_t world = ring->members(), rounds = ring->rounds();
    std::uint64_t per_channel = 0;  // ops of one member on one channel
    if (world == 1) {
      per_channel = rounds;
    } else {
      if (ring->reduce_scatter) per_channel += 2 * (world - 1) * rounds;
      if (ring->allgather) per_channel += 2 * (world - 1) * rounds + (ring->reduce_scatter ? 0 : rounds);
    }
    // Saturates rather than wraps: a loaded file may ask for absurd sizes, which the memory guard must see.
    const unsigned __int128 total = static_cast<unsigned __int128>(world) * ring->channels() * per_channel;
    return total > UINT64_MAX / 256 ? UINT64_MAX / 256 : static_cast<std::uint64_t>(total);
  }
  if (const auto* tree = std::get_if<TreePass>(&pass)) {
    const std::uint64_t rounds = tree->rounds();
    std::uint64_t per_round = 0;
    for (const Tree& t : tree->trees) {
      for (std::size_t m = 0; m < t.parent.size(); ++m) {
        const std::uint64_t children = t.children[m].size();
        const bool has_parent = t.parent[m] >= 0;
        per_round += children == 0 ? 0 : 2 * children - 1;      // receives and local adds
        per_round += has_parent ? 2 : (children == 0 ? 1 : 0);  // send up + receive down, or the root's copy
        per_round += children;                                  // sends down
      }
    }
    const unsigned __int128 total = static_cast<unsigned __int128>(per_round) * rounds;
    return total > UINT64_MAX / 256 ? UINT64_MAX / 256 : static_cast<std::uint64_t>(total);
  }
  return std::get<ExplicitPass>(pass).programs.num_ops();
}

}  // namespace cclab
