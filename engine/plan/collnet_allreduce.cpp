#include "engine/plan/collnet_allreduce.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/ir/compact.hpp"
#include "engine/ir/pipeline.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule collnet_allreduce(const CollectiveSpec& spec, const std::vector<std::vector<int>>& groups,
                           int channels, std::uint64_t round_elems) {
  Schedule s = empty_schedule(spec, "collnet");
  // Every stream is its own IR channel (lanes_per_channel 1): a GPU's scatter and gather messages to its
  // peers all run at once, and the α-β model splits a link among the IR channels crossing it.
  s.lanes_per_channel = 1;
  const int nodes = static_cast<int>(groups.size());
  const int g = uniform_gpus_per_node(groups, spec, "collnet");
  if (plan_world_of_one(s)) return s;
  channels = std::max(1, channels);
  const std::uint64_t S = spec.count;
  require_explicit_plan_fits(collnet_ops_estimate(spec, g, channels, round_elems), "collnet", spec.world_size,
                             channels);
  const std::uint64_t block_elems = (S + g - 1) / static_cast<std::uint64_t>(g);
  // IR channels of network channel c: a scatter lane per pair of local ranks (both directions), the
  // network lane, a gather lane per pair.
  const int pairs = g * (g - 1) / 2, lanes = 2 * pairs + 1;
  CCLAB_ENFORCE(static_cast<long long>(lanes) * channels <= 65535,
                "collnet: {} channels of {} GPUs per node need more than 65,535 IR channels", channels, g);
  const auto pair = [&](int a, int b) {
    if (a > b) std::swap(a, b);
    return a * g - a * (a + 1) / 2 + (b - a - 1);
  };
  std::vector<std::vector<OpId>> got;  // per round: the peers' contributions received
  std::vector<OpId> summed, reduced;
  for (int c = 0; c < channels; ++c) {
    const int network = c * lanes + pairs;
    const auto scatter = [&](int a, int b) { return c * lanes + pair(a, b); };
    const auto gather = [&](int a, int b) { return c * lanes + pairs + 1 + pair(a, b); };
    // Member m's part of the channel and its rounds, the same on every node: a SHARP group's members and a
    // pair of peers agree on every range.
    const MemberRounds pipe = member_rounds(S, g, channels, c, round_elems);
    const int rounds = pipe.rounds;
    auto at = [&](int m, Buffer buffer, int k) { return pipe.at(m, buffer, k); };
    for (int n = 0; n < nodes; ++n) {
      for (int m = 0; m < g; ++m) {
        const int rank = groups[n][m];
        const int group = groups[0][m];  // node 0's GPU m names the SHARP group of local rank m
        Program& program = s.ranks[rank];
        ProgramBuilder b(program);
        // Scratch: a block-sized area per peer (in peer order, skipping m) for its share of our block.
        program.scratch_count = std::max<std::uint64_t>(program.scratch_count, block_elems * (g - 1));
        const std::uint64_t block_offset = partition(ElemRange{0, S}, g, m).offset;
        auto slot = [&](int j, int k) {
          const Chunk own = at(m, Buffer::Input, k);
          const std::uint64_t area = static_cast<std::uint64_t>(j < m ? j : j - 1);
          return Chunk{Buffer::Scratch, area * block_elems + (own.offset - block_offset), own.count};
        };
        got.assign(rounds, {});
        summed.assign(rounds, kNoOp);
        reduced.assign(rounds, kNoOp);
        pipeline(
            rounds,
            [&](int k) {
              // The peers' shares of our block, and their blocks' share of our input, go out at once; the
              // results of their blocks are received into the output (after our input of that range has left:
              // in place, the output is the input).
              const bool moves = at(m, Buffer::Input, k).count > 0;
              for (int j = 0; j < g; ++j) {
                if (j == m) continue;
                OpId sent = kNoOp;
                if (at(j, Buffer::Input, k).count > 0)
                  sent = b.send(groups[n][j], scatter(m, j), at(j, Buffer::Input, k));
                if (moves) got[k].push_back(b.recv(groups[n][j], scatter(m, j), slot(j, k)));
                if (at(j, Buffer::Output, k).count > 0)
                  b.recv(groups[n][j], gather(m, j), at(j, Buffer::Output, k), {sent});
              }
            },
            [&](int k) {
              if (at(m, Buffer::Input, k).count == 0) return;
              // On the network lane, in round order: the node sum gathers in the first peer's slot: our input
              // added to it, then the other slots.
              const int first = m == 0 ? 1 : 0;
              Chunk sum = at(m, Buffer::Input, k);
              if (g > 1) {
                summed[k] = b.local_reduce(sum, slot(first, k), {got[k][0]}, network);
                sum = slot(first, k);
                for (std::size_t x = 1; x < got[k].size(); ++x) {
                  const int j = static_cast<int>(x) + (static_cast<int>(x) >= m ? 1 : 0);
                  summed[k] = b.local_reduce(slot(j, k), sum, {summed[k], got[k][x]}, network);
                }
              }
              // At most kPostAhead SHARP operations of a channel in flight.
              reduced[k] = b.switch_reduce(group, network, sum, at(m, Buffer::Output, k),
                                           {summed[k], k >= kPostAhead ? reduced[k - kPostAhead] : kNoOp});
              for (int j = 0; j < g; ++j)
                if (j != m) b.send(groups[n][j], gather(m, j), at(m, Buffer::Output, k), {reduced[k]});
            });
      }
    }
  }
  return s;
}

std::optional<std::string> collnet_unsupported(const topo::Topology& t) {
  if (t.num_nodes() < 2) return "one node: there is no network to reduce in (NCCL runs CollNet across nodes)";
  for (const topo::VertexId gpu : t.gpus()) {
    const std::optional<topo::SwitchPort> port = topo::sharp_port(t, gpu);
    if (!port) return fmt::format("GPU {} has no NIC on a network switch", t.vertex(gpu).name);
    if (!t.vertex(port->sw).sharp) {
      return fmt::format("switch {} (of GPU {}'s NIC) has no SHARP (sharp: true, or the preset key sharp=1)",
                         t.vertex(port->sw).name, t.vertex(gpu).name);
    }
  }
  return std::nullopt;
}

std::uint64_t collnet_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                   std::uint64_t round_elems) {
  const auto g = static_cast<std::uint64_t>(std::max(1, gpus_per_node));
  return member_ops_estimate(spec, gpus_per_node, channels, round_elems, 5 * (g - 1) + 1);
}

}  // namespace cclab::planners
