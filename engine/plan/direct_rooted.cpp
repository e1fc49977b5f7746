#include "engine/plan/direct_rooted.hpp"

#include <algorithm>
#include <string>

#include "engine/plan/patterns.hpp"

namespace cclab::planners {
namespace {

// The root's whole buffer (gather: its output, scatter: its input) holds block q at q's offset; every other
// rank's block buffer (gather: its input, scatter: its output) holds its block from 0.
Schedule direct_rooted(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems, bool gather) {
  Schedule s = empty_schedule(spec, "direct");
  // NCCL's p2p schedule counts the root itself as the peer at offset 0 (its copy runs on channels too).
  const int world = spec.world_size, root = spec.root, peers = std::max(1, world);
  const Buffer whole = gather ? Buffer::Output : Buffer::Input,
               part = gather ? Buffer::Input : Buffer::Output;
  channels = std::max(1, channels);
  s.network_channels = channels;
  s.params["channels"] = std::to_string(channels);
  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const ElemRange block = partition(spec.count, world, r);
    if (r != root) {
      const int d = (r - root + world) % world;
      for (const P2pPiece& p :
           p2p_pieces({0, block.count}, part, peer_channels(d, peers, channels), chunk_elems)) {
        if (gather) {
          b.send(root, p.channel, p.chunk);
        } else {
          b.recv(root, p.channel, p.chunk);
        }
      }
      continue;
    }
    // The root's own block between its two buffers (in place it is already there: a copy onto itself).
    const std::vector<int> self = peer_channels(0, peers, channels);
    const std::vector<P2pPiece> own = p2p_pieces({0, block.count}, part, self, chunk_elems);
    const std::vector<P2pPiece> placed = p2p_pieces(block, whole, self, chunk_elems);
    for (std::size_t i = 0; i < own.size(); ++i) {
      if (gather) {
        b.copy(own[i].chunk, placed[i].chunk, {}, own[i].channel);
      } else {
        b.copy(placed[i].chunk, own[i].chunk, {}, own[i].channel);
      }
    }
    for (int d = 1; d < world; ++d) {
      const int peer = (root + d) % world;
      for (const P2pPiece& p : p2p_pieces(partition(spec.count, world, peer), whole,
                                          peer_channels(d, peers, channels), chunk_elems)) {
        if (gather) {
          b.recv(peer, p.channel, p.chunk);
        } else {
          b.send(peer, p.channel, p.chunk);
        }
      }
    }
  }
  return s;
}

}  // namespace

Schedule direct_gather(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  return direct_rooted(spec, channels, chunk_elems, true);
}

Schedule direct_scatter(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  return direct_rooted(spec, channels, chunk_elems, false);
}

Algorithm direct_gather_algorithm() {
  return Algorithm{
      .name = "direct",
      .collective = Collective::Gather,
      .description = "every rank sends its block to the root at once (grouped send/receive)",
      .supports = any_world,
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return explicit_plan(direct_gather(s, channels_or(o, p2p_channels(s, t)), chunk_of(o, s)));
          },
      .default_channels = p2p_channels,
      .nccl_p2p = true};
}

Algorithm direct_scatter_algorithm() {
  return Algorithm{
      .name = "direct",
      .collective = Collective::Scatter,
      .description = "the root sends each rank its block at once (grouped send/receive)",
      .supports = any_world,
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return explicit_plan(direct_scatter(s, channels_or(o, p2p_channels(s, t)), chunk_of(o, s)));
          },
      .default_channels = p2p_channels,
      .nccl_p2p = true};
}

}  // namespace cclab::planners
