#include "engine/plan/nvls_sharp_allreduce.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "engine/ir/compact.hpp"
#include "engine/ir/pipeline.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule nvls_sharp_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                              int channels, std::uint64_t round_elems) {
  Schedule s = empty_schedule(spec, "nvls_sharp");
  s.lanes_per_channel = 2;  // IR channels 2c (NVSwitch) and 2c+1 (SHARP): one channel
  const int nodes = static_cast<int>(groups.size());
  const int g = uniform_gpus_per_node(groups, spec, "nvls_sharp");
  if (plan_world_of_one(s)) return s;
  channels = std::max(1, channels);
  const std::uint64_t S = spec.count;
  require_explicit_plan_fits(nvls_sharp_ops_estimate(spec, g, channels, round_elems), "nvls_sharp",
                             spec.world_size, channels);
  std::vector<OpId> node_sum, network_sum, stored;
  for (int c = 0; c < channels; ++c) {
    const int sw = 2 * c, network = 2 * c + 1;
    // Member m's part and rounds, the same on every node: a SHARP group's members agree on each round.
    const MemberRounds pipe = member_rounds(S, g, channels, c, round_elems);
    const int rounds = pipe.rounds;
    for (int n = 0; n < nodes; ++n) {
      for (int m = 0; m < g; ++m) {
        ProgramBuilder b(s.ranks[groups[n][m]]);
        const int node_group = groups[n][0];   // the node's first GPU names its NVLS group
        const int sharp_group = groups[0][m];  // node 0's GPU m names the SHARP group of local rank m
        auto at = [&](Buffer buffer, int k) { return pipe.at(m, buffer, k); };
        node_sum.assign(rounds, kNoOp);
        network_sum.assign(rounds, kNoOp);
        stored.assign(rounds, kNoOp);
        pipeline(
            rounds,
            [&](int k) {
              // A channel's rounds go through the switch one after the other (its SMs issue them in turn);
              // the network's are posted as the node sums come, at most kPostAhead in flight.
              node_sum[k] = b.switch_reduce(node_group, sw, at(Buffer::Input, k), at(Buffer::Output, k),
                                            {k > 0 ? node_sum[k - 1] : kNoOp});
              network_sum[k] =
                  b.switch_reduce(sharp_group, network, at(Buffer::Output, k), at(Buffer::Output, k),
                                  {node_sum[k], k >= kPostAhead ? network_sum[k - kPostAhead] : kNoOp});
            },
            [&](int k) {
              stored[k] = b.switch_store(node_group, sw, at(Buffer::Output, k), at(Buffer::Output, k),
                                         {network_sum[k], k > 0 ? stored[k - 1] : kNoOp});
            });
      }
    }
  }
  return s;
}

std::uint64_t nvls_sharp_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                      std::uint64_t round_elems) {
  return member_ops_estimate(spec, gpus_per_node, channels, round_elems, 3);
}

}  // namespace cclab::planners
