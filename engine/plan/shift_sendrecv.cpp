#include "engine/plan/shift_sendrecv.hpp"

#include <algorithm>
#include <string>

#include "engine/plan/patterns.hpp"

namespace cclab::planners {

Schedule shift_sendrecv(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "shift");
  channels = std::max(1, channels);
  s.network_channels = channels;
  s.params["channels"] = std::to_string(channels);
  if (plan_world_of_one(s)) return s;  // a rank that sends to itself: a copy
  const int world = spec.world_size;
  const std::vector<int> all = peer_channels(0, 1, channels);  // the one peer takes every channel
  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    for (const P2pPiece& p : p2p_pieces({0, spec.count}, Buffer::Input, all, chunk_elems))
      b.send((r + 1) % world, p.channel, p.chunk);
    for (const P2pPiece& p : p2p_pieces({0, spec.count}, Buffer::Output, all, chunk_elems))
      b.recv((r - 1 + world) % world, p.channel, p.chunk);
  }
  return s;
}

Algorithm shift_sendrecv_algorithm() {
  return Algorithm{
      .name = "shift",
      .collective = Collective::SendRecv,
      .description = "every rank sends its buffer to the next and receives the previous one's",
      .supports = any_world,
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return explicit_plan(shift_sendrecv(s, channels_or(o, ring_channels(s, t)), chunk_of(o, s)));
          },
      .default_channels = ring_channels,
      .nccl_p2p = true};
}

}  // namespace cclab::planners
