#include "engine/plan/patterns.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/memory.hpp"

namespace cclab::planners {

std::vector<Chunk> wrapped_blocks(std::uint64_t count, int world, int first, int n, Buffer buffer) {
  std::vector<Chunk> out;
  const int head = std::min(n, world - first);
  const ElemRange a = partition(count, world, first), b = partition(count, world, first + head - 1);
  out.push_back(Chunk{buffer, a.offset, b.end() - a.offset});
  if (n > head) {
    const ElemRange c = partition(count, world, 0), d = partition(count, world, n - head - 1);
    out.push_back(Chunk{buffer, c.offset, d.end() - c.offset});
  }
  return out;
}

std::vector<int> peer_channels(int peer, int peers, int channels) {
  if (channels < peers) return {peer % channels};
  std::vector<int> out;
  for (int j = 0; j < channels / peers; ++j)
    out.push_back(peer + j * peers);
  return out;
}

std::vector<P2pPiece> p2p_pieces(ElemRange range, Buffer buffer, const std::vector<int>& channels,
                                 std::uint64_t chunk_elems) {
  std::vector<P2pPiece> out;
  const int parts = static_cast<int>(channels.size());
  for (int j = 0; j < parts; ++j) {
    const ElemRange part = partition(range, parts, j);
    const int rounds = chunk_rounds(part.count, chunk_elems);
    for (int k = 0; k < rounds; ++k)
      out.push_back({channels[j], round_chunk(part, rounds, k, buffer)});
  }
  return out;
}

void require_block_exchange_fits(const CollectiveSpec& spec, std::uint64_t ops, std::string_view what,
                                 std::string_view way_out) {
  const auto world = static_cast<std::uint64_t>(std::max(1, spec.world_size));
  // Past 2^24 ranks the product would wrap; no budget holds that many blocks anyway.
  const std::uint64_t block_bytes =
      world > (std::uint64_t{1} << 24) ? UINT64_MAX / 2 : world * world * kVerifierBytesPerBlock;
  require_within_memory_budget(
      std::min(ops, UINT64_MAX / 4 / kExplicitBytesPerOp) * kExplicitBytesPerOp + block_bytes,
      fmt::format("{} on {} ranks (about {} ops, {} blocks to verify)", what, world, ops, world * world),
      way_out);
}

std::vector<int> bruck_distances(int world) {
  std::vector<int> out;
  for (int d = 1; d < world; d *= 2)
    out.push_back(d);
  return out;
}

std::vector<std::vector<int>> node_groups(const topo::Topology& topology) {
  // World ranks are ordered by (node, local rank), so a node's ranks are one run. One pass over the ranks,
  // not a loop over node indices: those need not be dense (fuzz/topology_yaml_fuzz found a file with node
  // 88888888 that took minutes here).
  std::vector<std::vector<int>> groups;
  const int world = static_cast<int>(topology.gpus().size());
  for (int r = 0; r < world; ++r) {
    if (r == 0 || topology.node_of_rank(r) != topology.node_of_rank(r - 1)) groups.emplace_back();
    groups.back().push_back(r);
  }
  return groups;
}

std::vector<int> group_nics(const topo::Topology& topology, const std::vector<int>& group) {
  const auto& of_node = topology.nics_of_node(topology.node_of_rank(group.front()));
  std::vector<int> nic(group.size(), -1);
  std::vector<std::size_t> hops(group.size(), 0);
  std::map<int, std::size_t> nearest;  // by NIC index: the fewest hops any GPU of the group has to it
  for (std::size_t i = 0; i < group.size(); ++i) {
    const topo::VertexId gpu = topology.gpus()[group[i]];
    const auto v = topology.gpu_nic(gpu);
    const auto it = v ? std::find(of_node.begin(), of_node.end(), *v) : of_node.end();
    if (it == of_node.end()) continue;
    nic[i] = static_cast<int>(it - of_node.begin());
    hops[i] = topology.route(gpu, *v).hops.size();
    const auto [at, fresh] = nearest.try_emplace(nic[i], hops[i]);
    if (!fresh) at->second = std::min(at->second, hops[i]);
  }
  for (std::size_t i = 0; i < group.size(); ++i)
    if (nic[i] >= 0 && hops[i] > nearest.at(nic[i])) nic[i] = -1;
  return nic;
}

std::vector<std::vector<int>> node_nics(const topo::Topology& topology,
                                        const std::vector<std::vector<int>>& groups) {
  std::vector<std::vector<int>> nics;
  for (const auto& group : groups)
    nics.push_back(group_nics(topology, group));
  return nics;
}

std::vector<std::vector<int>> singleton_groups(int world_size) {
  std::vector<std::vector<int>> groups;
  for (int r = 0; r < world_size; ++r)
    groups.push_back({r});
  return groups;
}

std::vector<std::vector<int>> identity_rings(int world_size, int channels) {
  std::vector<int> ring(world_size);
  for (int r = 0; r < world_size; ++r)
    ring[r] = r;
  return std::vector<std::vector<int>>(channels, ring);
}

Tree binary_tree(int n) {
  std::vector<int> parent(n, -1);
  for (int r = 1; r < n; ++r) {
    const int low = r & -r;
    int up = (r ^ low) | (low << 1);
    if (up >= n) up = r ^ low;
    parent[r] = up;
  }
  return tree_from_parents(std::move(parent));
}

Tree complementary_binary_tree(int n) {
  const Tree base = binary_tree(n);
  std::vector<int> parent(n, -1);
  for (int r = 0; r < n; ++r) {
    if (n % 2 == 0) {
      const int p = base.parent[n - 1 - r];
      parent[r] = p < 0 ? -1 : n - 1 - p;
    } else {
      const int p = base.parent[(r - 1 + n) % n];
      parent[r] = p < 0 ? -1 : (p + 1) % n;
    }
  }
  return tree_from_parents(std::move(parent));
}

Tree rooted_binary_tree(int n, int root) {
  const Tree base = binary_tree(n);
  std::vector<int> parent(n, -1);
  for (int r = 0; r < n; ++r) {
    const int p = base.parent[(r - root + n) % n];
    parent[r] = p < 0 ? -1 : (p + root) % n;
  }
  return tree_from_parents(std::move(parent));
}

int uniform_gpus_per_node(const std::vector<std::vector<int>>& groups, const CollectiveSpec& spec,
                          std::string_view algorithm) {
  CCLAB_ENFORCE(!groups.empty(), "{} needs at least one node", algorithm);
  const int g = static_cast<int>(groups[0].size());
  for (const auto& group : groups)
    CCLAB_ENFORCE(static_cast<int>(group.size()) == g, "{} needs the same GPU count on every node",
                  algorithm);
  CCLAB_ENFORCE(static_cast<int>(groups.size()) * g == spec.world_size,
                "{}: the groups hold {} ranks, the world {}", algorithm, static_cast<int>(groups.size()) * g,
                spec.world_size);
  return g;
}

bool plan_world_of_one(Schedule& s) {
  if (s.spec.world_size != 1) return false;
  if (s.spec.count > 0)
    ProgramBuilder(s.ranks[0]).copy({Buffer::Input, 0, s.spec.count}, {Buffer::Output, 0, s.spec.count});
  return true;
}

CompactSchedule compact_world_of_one(const CollectiveSpec& spec, const std::string& algorithm) {
  Schedule one = empty_schedule(spec, algorithm);
  plan_world_of_one(one);
  return one_lane(spec, algorithm, ExplicitPass{std::move(one)});
}

CompactSchedule node_major_plan(const CollectiveSpec& spec, const std::string& algorithm,
                                const std::vector<std::vector<int>>& groups, Pass pass,
                                int lanes_per_channel) {
  CompactSchedule s(spec, algorithm);
  Lane lane;
  for (const std::vector<int>& node : groups)
    lane.ranks.insert(lane.ranks.end(), node.begin(), node.end());
  lane.pass = std::make_shared<const Pass>(std::move(pass));
  s.add_lane(std::move(lane));
  s.params.lanes_per_channel = lanes_per_channel;
  return s;
}

CompactSchedule sharp_allreduce_plan(const CollectiveSpec& spec, const std::string& algorithm,
                                     const std::vector<std::vector<int>>& groups, int channels,
                                     std::uint64_t round_elems, SharpIntra intra) {
  const int g = uniform_gpus_per_node(groups, spec, algorithm);
  if (spec.world_size == 1) return compact_world_of_one(spec, algorithm);
  SharpPass pass;
  pass.intra = intra;
  pass.count = spec.count;
  pass.round_elems = round_elems;
  pass.gpus_per_node = g;
  pass.nodes = static_cast<int>(groups.size());
  pass.channel_count = std::max(1, channels);
  CCLAB_ENFORCE(static_cast<long long>(pass.ir_channels_per_channel()) * pass.channel_count <= 65535,
                "{}: {} channels of {} GPUs per node need more than 65,535 IR channels", algorithm, channels,
                g);
  // Two IR channels make a network channel. Direct: each pair of local ranks has its own, so that a GPU's
  // messages to its peers all run at once and the α-β model splits a link among the pairs crossing it, as
  // SimGrid does; a pair's scatter and gather are its two lanes, which follow each other in a round and count
  // once (NCCL runs them as warps of one thread block). Nvls: IR channels 2c (NVSwitch) and 2c+1 (SHARP).
  return node_major_plan(spec, algorithm, groups, std::move(pass), 2);
}

std::uint64_t member_ops_estimate(const CollectiveSpec& spec, int gpus_per_node, int channels,
                                  std::uint64_t round_elems, std::uint64_t ops_per_round) {
  const auto g = static_cast<std::uint64_t>(std::max(1, gpus_per_node));
  const auto c = static_cast<std::uint64_t>(std::max(1, channels));
  const std::uint64_t per_member = std::max<std::uint64_t>(1, round_elems / g);
  const std::uint64_t rounds = round_elems == 0 ? 1 : spec.count / (g * c) / per_member + 1;
  return static_cast<std::uint64_t>(spec.world_size) * c * rounds * ops_per_round;
}

std::uint64_t halved_chunk_bytes(std::uint64_t chunk, std::uint64_t bytes, int channels, int depth,
                                 std::initializer_list<ChunkHalving> halvings) {
  const std::uint64_t per_channel = bytes / static_cast<std::uint64_t>(std::max(channels, 1));
  const auto d = static_cast<std::uint64_t>(std::max(depth, 1));
  for (const ChunkHalving& h : halvings) {
    while (chunk > 0 && per_channel / chunk < h.chunks_per_depth * d && chunk > h.floor_bytes)
      chunk /= 2;
  }
  return chunk;
}

std::uint64_t chunk_elems(std::uint64_t chunk_bytes, DType dtype) {
  if (chunk_bytes == 0) return 0;
  return std::max<std::uint64_t>(1, chunk_bytes / dtype_size_bytes(dtype));
}

}  // namespace cclab::planners
