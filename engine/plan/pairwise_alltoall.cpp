#include "engine/plan/pairwise_alltoall.hpp"

#include <algorithm>
#include <string>

#include "engine/ir/compact.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule pairwise_alltoall(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "pairwise");
  const int world = spec.world_size;
  // NCCL's p2p schedule counts the rank itself as the peer at offset 0 (its copy runs on channels too).
  const int peers = std::max(1, world);
  channels = std::max(1, channels);
  s.network_channels = channels;
  s.params["channels"] = std::to_string(channels);
  // P² exchanges: an explicit plan that grows with the square of the ranks, refused up front where it would
  // not fit (16,384 ranks: half a billion ops).
  const int per_peer = channels >= peers ? channels / peers : 1;
  const std::uint64_t ops =
      static_cast<std::uint64_t>(world) *
      (2 * static_cast<std::uint64_t>(world) * per_peer *
       static_cast<std::uint64_t>(chunk_rounds(alltoall_block(spec, 0).count, chunk_elems)));
  require_block_exchange_fits(spec, ops, "the pairwise alltoall",
                              "fewer ranks (the plan has a transfer per pair of ranks), or fewer chunks "
                              "(--chunk) where blocks are larger than one");
  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const ElemRange own = alltoall_block(spec, r);
    const std::vector<int> self = peer_channels(0, peers, channels);
    const std::vector<P2pPiece> from_input = p2p_pieces(own, Buffer::Input, self, chunk_elems);
    const std::vector<P2pPiece> to_output = p2p_pieces(own, Buffer::Output, self, chunk_elems);
    for (std::size_t i = 0; i < from_input.size(); ++i)
      b.copy(from_input[i].chunk, to_output[i].chunk, {}, from_input[i].channel);
    for (int d = 1; d < world; ++d) {
      const int to = (r + d) % world, from = (r - d + world) % world;
      const std::vector<int> on = peer_channels(d, peers, channels);
      // NCCL posts a step's send before its receive; a channel starts its ops in program order, and a send
      // and a receive of different peers wait on nothing of each other.
      for (const P2pPiece& p : p2p_pieces(alltoall_block(spec, to), Buffer::Input, on, chunk_elems))
        b.send(to, p.channel, p.chunk);
      for (const P2pPiece& p : p2p_pieces(alltoall_block(spec, from), Buffer::Output, on, chunk_elems))
        b.recv(from, p.channel, p.chunk);
    }
  }
  return s;
}

Algorithm pairwise_alltoall_algorithm() {
  return Algorithm{
      .name = "pairwise",
      .collective = Collective::AllToAll,
      .description =
          "every pair exchanges its blocks at once, as NCCL's grouped send/receive (channels per peer "
          "offset)",
      // P equal blocks.
      .supports =
          [](const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o) {
            if (auto s = any_world(spec, t, o); !s.ok) return s;
            if (auto problem = alltoall_blocks_problem(spec)) return Support::no(*problem);
            return Support::yes();
          },
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return explicit_plan(pairwise_alltoall(s, channels_or(o, p2p_channels(s, t)), chunk_of(o, s)));
          },
      .default_channels = p2p_channels,
      .nccl_p2p = true};
}

}  // namespace cclab::planners
