// Each algorithm's plan against the steps and bytes its header states, and the α-β cost against the closed
// form.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/check/verifier.hpp"
#include "engine/ir/schedule_json.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/model/connections.hpp"
#include "engine/model/cost.hpp"
#include "engine/model/lower_bound.hpp"
#include "engine/model/nccl_tuning.hpp"
#include "engine/plan/chain_broadcast.hpp"
#include "engine/plan/chain_reduce.hpp"
#include "engine/plan/direct_rooted.hpp"
#include "engine/plan/halving_doubling_allreduce.hpp"
#include "engine/plan/hierarchical_allreduce.hpp"
#include "engine/plan/hypercube_allgather.hpp"
#include "engine/plan/pairwise_alltoall.hpp"
#include "engine/plan/pat_allgather.hpp"
#include "engine/plan/pat_reduce_scatter.hpp"
#include "engine/plan/patterns.hpp"
#include "engine/plan/ring_allgather.hpp"
#include "engine/plan/ring_allreduce.hpp"
#include "engine/plan/ring_reduce_scatter.hpp"
#include "engine/plan/ring_search.hpp"
#include "engine/plan/selection.hpp"
#include "engine/plan/shift_sendrecv.hpp"
#include "engine/plan/tree_allreduce.hpp"
#include "engine/plan/tree_broadcast.hpp"
#include "engine/plan/tree_reduce.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

using namespace planners;

CollectiveSpec spec(Collective c, int world, std::uint64_t count, int root = 0) {
  CollectiveSpec s;
  s.collective = c;
  s.world_size = world;
  s.count = count;
  s.root = root;
  return s;
}

const std::vector<int> kWorlds = {2, 3, 5, 7, 8, 11, 16, 24, 31, 64};

TEST(Formulas, RingAllreduce) {
  for (int p : kWorlds) {
    const std::uint64_t count = 60ULL * p;  // divisible by P
    const Schedule s =
        to_explicit(ring_allreduce(spec(Collective::AllReduce, p, count), identity_rings(p, 1), 0));
    EXPECT_EQ(count_steps(s), 2 * (p - 1)) << p;
    for (std::uint64_t bytes : bytes_sent_per_rank(s))
      EXPECT_EQ(bytes, 2ULL * (p - 1) * count / p * 4) << p;
  }
}

TEST(Formulas, RingReduceScatterAndAllgather) {
  for (int p : kWorlds) {
    const std::uint64_t count = 12ULL * p;
    const Schedule rs =
        to_explicit(ring_reduce_scatter(spec(Collective::ReduceScatter, p, count), identity_rings(p, 1), 0));
    const Schedule ag =
        to_explicit(ring_allgather(spec(Collective::AllGather, p, count), identity_rings(p, 1), 0));
    EXPECT_EQ(count_steps(rs), p - 1);
    EXPECT_EQ(count_steps(ag), p - 1);
    for (std::uint64_t bytes : bytes_sent_per_rank(rs))
      EXPECT_EQ(bytes, (p - 1) * count / p * 4);
    for (std::uint64_t bytes : bytes_sent_per_rank(ag))
      EXPECT_EQ(bytes, (p - 1) * count / p * 4);
  }
}

TEST(Formulas, PatAllgather) {
  for (int p : kWorlds) {
    const std::uint64_t count = 12ULL * p;
    const Schedule s = pat_allgather(spec(Collective::AllGather, p, count));
    EXPECT_EQ(count_steps(s), static_cast<int>(std::ceil(std::log2(p)))) << p;
    for (std::uint64_t bytes : bytes_sent_per_rank(s))
      EXPECT_EQ(bytes, (p - 1) * count / p * 4) << p;
    EXPECT_FALSE(verify(s)) << p;
  }
}

TEST(Formulas, PatReduceScatter) {
  for (int p : kWorlds) {
    const std::uint64_t count = 12ULL * p;
    const Schedule s = pat_reduce_scatter(spec(Collective::ReduceScatter, p, count));
    EXPECT_EQ(count_steps(s), static_cast<int>(std::ceil(std::log2(p)))) << p;
    for (std::uint64_t bytes : bytes_sent_per_rank(s))
      EXPECT_EQ(bytes, (p - 1) * count / p * 4) << p;
    EXPECT_FALSE(verify(s)) << p;
  }
}

TEST(Formulas, ChunkingPipelinesRing) {
  // K chunks per block on one channel add K-1 steps, not K times the steps.
  const int p = 8, k = 4;
  const Schedule s =
      to_explicit(ring_allreduce(spec(Collective::AllReduce, p, 64ULL * p), identity_rings(p, 1), 64 / k));
  EXPECT_EQ(count_steps(s), 2 * (p - 1));
  std::size_t sends = 0;
  for (const Op& op : s.ranks[0].ops)
    sends += op.kind == OpKind::Send;
  EXPECT_EQ(sends, static_cast<std::size_t>(2 * (p - 1) * k));
}

TEST(Formulas, HalvingDoubling) {
  for (int p : kWorlds) {
    const std::uint64_t count = 64ULL * p;
    const Schedule s = halving_doubling_allreduce(spec(Collective::AllReduce, p, count));
    const int lg = static_cast<int>(std::floor(std::log2(p)));
    const bool pow2 = (p & (p - 1)) == 0;
    EXPECT_EQ(count_steps(s), pow2 ? 2 * lg : 2 * lg + 2) << p;
    if (pow2) {
      for (std::uint64_t bytes : bytes_sent_per_rank(s))
        EXPECT_EQ(bytes, 2ULL * (p - 1) * count / p * 4) << p;
    }
  }
}

TEST(Formulas, DoubleBinaryTree) {
  for (int nodes : {1, 2, 3, 5, 8, 13}) {
    for (int g : {1, 4}) {
      std::vector<std::vector<int>> groups(nodes);
      for (int n = 0; n < nodes; ++n)
        for (int j = 0; j < g; ++j)
          groups[n].push_back(n * g + j);
      const int p = nodes * g;
      // Pair 0's chains (no NICs: headed at local index 0), trees 0 and 1.
      const std::vector<int> heads(nodes, 0);
      const Tree t0 = double_binary_tree(groups, 0, heads), t1 = double_binary_tree(groups, 1, heads);
      // Depth: the node chain plus at most ⌈log2 N⌉ tree levels, each two hops with chains (a child's head
      // to its parent's second GPU, that to its head).
      const int log_nodes = nodes > 1 ? static_cast<int>(std::ceil(std::log2(nodes))) : 0;
      EXPECT_LE(t0.depth(), g - 1 + (g > 1 ? 2 : 1) * log_nodes);
      EXPECT_LE(t1.depth(), g - 1 + (g > 1 ? 2 : 1) * log_nodes);
      // Complementary trees: with an even node count no node is interior in both; with an odd count one is.
      const Tree n0 = binary_tree(nodes), n1 = complementary_binary_tree(nodes);
      int interior_in_both = 0;
      for (int n = 0; n < nodes; ++n)
        interior_in_both += !n0.children[n].empty() && !n1.children[n].empty();
      EXPECT_EQ(interior_in_both, nodes % 2 == 1 && nodes > 1 ? 1 : 0) << nodes << " nodes";
      const std::uint64_t count = 64ULL * p;
      const Schedule s = to_explicit(tree_allreduce(spec(Collective::AllReduce, p, count), groups, {}, 2, 0));
      EXPECT_EQ(count_steps(s), 2 * std::max(t0.depth(), t1.depth()));
      // Bytes: per channel (half the data), one copy up unless root, one copy down per child.
      const auto bytes = bytes_sent_per_rank(s);
      for (int r = 0; r < p; ++r) {
        std::uint64_t want = 0;
        for (int c = 0; c < 2; ++c) {
          const Tree& t = c == 0 ? t0 : t1;
          const std::uint64_t half = partition(count, 2, c).count * 4;
          want += half * ((t.parent[r] >= 0 ? 1 : 0) + t.children[r].size());
        }
        EXPECT_EQ(bytes[r], want) << "rank " << r;
      }
    }
  }
}

// NCCL's balanced tree: a pair's chain has its head (parent traffic) and tail (children traffic) on two NICs,
// and both trees of the pair use them, so no NIC of a node carries more than two slices per pair. Before the
// pairs shared their NICs, a node interior in tree 0 pushed three slices through tree 0's NIC.
TEST(Formulas, TreeChannelsBalanceNodeNics) {
  for (const char* preset : {"dgx_a100:4", "dgx_a100:5", "dgx1_v100:4", "dgx_h100:8"}) {
    const topo::Topology t = topo::make_preset(preset);
    const auto groups = node_groups(t);
    const auto nics = node_nics(t, groups);
    const int p = static_cast<int>(t.gpus().size()), channels = static_cast<int>(t.nics_of_node(0).size());
    ASSERT_GE(channels, 2) << preset;
    const std::uint64_t count = 1ULL << 20;
    const Schedule s =
        to_explicit(tree_allreduce(spec(Collective::AllReduce, p, count), groups, nics, channels, 0));
    // Bytes leaving each (node, NIC) for other nodes.
    std::map<std::pair<int, int>, std::uint64_t> nic_bytes;
    for (int r = 0; r < p; ++r) {
      const int node = t.node_of_rank(r), local = t.vertex(t.gpus()[r]).local_rank;
      for (const Op& op : s.ranks[r].ops)
        if (op.kind == OpKind::Send && t.node_of_rank(op.peer) != node)
          nic_bytes[{node, nics[static_cast<std::size_t>(node)][local]}] += op.src.count * 4;
    }
    const std::uint64_t slice = count * 4 / channels;
    std::set<int> used;
    for (const auto& [at, bytes] : nic_bytes) {
      EXPECT_LE(bytes, 2 * slice + 64) << preset << " node " << at.first << " NIC " << at.second;
      used.insert(at.second);
    }
    EXPECT_EQ(used.size(), t.nics_of_node(0).size()) << preset << ": every NIC carries part of the trees";
  }
}

// NCCL's tree chunk: the Simple step (512 KiB) at most, halved while a channel has fewer than 8·depth chunks
// (not below 128 KiB), 4·depth (64 KiB), depth (32 KiB).
TEST(Formulas, TreeChunkFollowsNcclsRule) {
  const std::uint64_t KiB = 1024, MiB = KiB * KiB;
  // 4 nodes of 8: depth 9. 1 GiB over 8 channels: 256 chunks of 512 KiB per channel, enough.
  EXPECT_EQ(tree_chunk_bytes(1024 * MiB, 8, 9, MiB), 512 * KiB);
  // 256 MiB: 64 chunks of 512 KiB < 72, 128 of 256 KiB.
  EXPECT_EQ(tree_chunk_bytes(256 * MiB, 8, 9, MiB), 256 * KiB);
  // 64 MiB: 8 MiB per channel; 64 chunks of 128 KiB < 72, but that is the first floor, and 64 >= 36.
  EXPECT_EQ(tree_chunk_bytes(64 * MiB, 8, 9, MiB), 128 * KiB);
  // 16 MiB: 2 MiB per channel; 16 of 128 KiB < 36, so 64 KiB (32 chunks, >= 9).
  EXPECT_EQ(tree_chunk_bytes(16 * MiB, 8, 9, MiB), 64 * KiB);
  // 1 MiB: 128 KiB per channel; 2 of 64 KiB < 9, so 32 KiB, the last floor.
  EXPECT_EQ(tree_chunk_bytes(MiB, 8, 9, MiB), 32 * KiB);
  // A smaller --chunk is the ceiling; 0 (unchunked) stays unchunked.
  EXPECT_EQ(tree_chunk_bytes(1024 * MiB, 8, 9, 64 * KiB), 64 * KiB);
  EXPECT_EQ(tree_chunk_bytes(1024 * MiB, 8, 9, 0), 0u);
}

TEST(Formulas, BroadcastAndReduce) {
  for (int p : kWorlds) {
    const std::uint64_t count = 32;
    const int root = p / 3;
    std::vector<int> chain;
    for (int j = 0; j < p; ++j)
      chain.push_back((root + j) % p);
    const Schedule cb = chain_broadcast(spec(Collective::Broadcast, p, count, root), {chain}, 0);
    EXPECT_EQ(count_steps(cb), p - 1);
    std::vector<int> to_root(chain.begin() + 1, chain.end());
    to_root.push_back(root);
    const Schedule cr = chain_reduce(spec(Collective::Reduce, p, count, root), {to_root}, 0);
    EXPECT_EQ(count_steps(cr), p - 1);
    const Tree tree = rooted_binary_tree(p, root);
    const Schedule tb = tree_broadcast(spec(Collective::Broadcast, p, count, root), 1, 0);
    const Schedule tr = tree_reduce(spec(Collective::Reduce, p, count, root), 1, 0);
    EXPECT_EQ(count_steps(tb), tree.depth());
    EXPECT_EQ(count_steps(tr), tree.depth());
    EXPECT_LE(tree.depth(), static_cast<int>(std::ceil(std::log2(p))));
    const auto tb_bytes = bytes_sent_per_rank(tb), cr_bytes = bytes_sent_per_rank(cr);
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(tb_bytes[r], tree.children[r].size() * count * 4);
      EXPECT_EQ(cr_bytes[r], r == root ? 0 : count * 4);
    }
  }
}

TEST(Formulas, Hierarchical) {
  for (int nodes : {1, 2, 3, 4}) {
    for (int g : {1, 2, 8}) {
      std::vector<std::vector<int>> groups(nodes);
      for (int n = 0; n < nodes; ++n)
        for (int j = 0; j < g; ++j)
          groups[n].push_back(n * g + j);
      const std::uint64_t count = 16ULL * g * nodes;
      const Schedule s = to_explicit(hierarchical_allreduce(spec(Collective::AllReduce, nodes * g, count),
                                                            groups, InterAlgorithm::Ring, 1, 0));
      EXPECT_EQ(count_steps(s), 2 * (g - 1) + 2 * (nodes - 1)) << nodes << "x" << g;
      // Intra 2(g-1)/g·S plus inter 2(N-1)/N·S/g.
      const std::uint64_t want = (2ULL * (g - 1) * count / g + 2ULL * (nodes - 1) * (count / g) / nodes) * 4;
      for (std::uint64_t bytes : bytes_sent_per_rank(s))
        EXPECT_EQ(bytes, want) << nodes << "x" << g;
    }
  }
}

// P GPUs on one switch, every link α/2 latency and bandwidth B.
topo::Topology star(int p, double link_latency_s, double bandwidth_Bps) {
  topo::Topology t("star");
  t.set_link_model(topo::LinkKind::InfiniBand,
                   topo::LinkModel{1.0, 0.0});  // raw α and B, as the formulas use
  const topo::VertexId sw = t.add_vertex(topo::Vertex{"switch", topo::VertexKind::Switch});
  for (int r = 0; r < p; ++r) {
    const topo::VertexId g =
        t.add_vertex(topo::Vertex{"gpu" + std::to_string(r), topo::VertexKind::Gpu, r, 0});
    t.add_link(g, sw, topo::LinkKind::InfiniBand, bandwidth_Bps, link_latency_s);
  }
  return t;
}

// CPU ranks, one core each: a rank copies what it receives and reduces it one after the other. Unchunked, a
// 2-rank ring has nothing to overlap and both walks agree to the last bit; chunked, the GPU walk overlaps the
// next chunk's transfer with this chunk's reduction, the one-core walk cannot: it takes at least the sum of
// what one rank's core does (its K receives of each half, each α + c/B, and its K reductions of c/R).
TEST(Cost, OneCorePerRankSerializesCopiesAndReductions) {
  const double alpha = 2e-6, bandwidth = 10e9, reduce = 20e9;
  const topo::Topology t = star(2, alpha / 2, bandwidth);
  CostParams gpu;
  gpu.reduce_Bps = reduce;
  CostParams cpu = gpu;
  cpu.one_core_per_rank = true;
  const std::uint64_t count = 1 << 20;  // 4 MiB, 2 MiB per rank's block
  const CompactSchedule whole =
      ring_allreduce(spec(Collective::AllReduce, 2, count), identity_rings(2, 1), 0);
  EXPECT_DOUBLE_EQ(estimate_compact_cost(whole, t, cpu).total_s,
                   estimate_compact_cost(whole, t, gpu).total_s);
  const int chunks = 8;
  const CompactSchedule chunked =
      ring_allreduce(spec(Collective::AllReduce, 2, count), identity_rings(2, 1), count / 2 / chunks);
  const double c = count * 4.0 / 2 / chunks;  // bytes per chunk
  const double serial = 2 * chunks * (alpha + c / bandwidth) + chunks * c / reduce;
  const double on_gpu = estimate_compact_cost(chunked, t, gpu).total_s;
  const double on_cpu = estimate_compact_cost(chunked, t, cpu).total_s;
  EXPECT_LT(on_gpu, serial);
  EXPECT_GE(on_cpu, serial * (1 - 1e-12));
  EXPECT_LT(on_cpu, serial * 1.05);  // and not much more: the two ranks mirror each other
}

TEST(Cost, RingAllreduceMatchesClosedForm) {
  const double alpha = 5e-6, bandwidth = 12.5e9;
  CostParams free_reduction;
  free_reduction.reduce_Bps = 0;
  for (int p : {2, 3, 8, 16, 64}) {
    const topo::Topology t = star(p, alpha / 2, bandwidth);
    for (std::uint64_t count : {1024ULL * p, 1ULL << 24}) {
      const std::uint64_t divisible = count / p * p;
      const Schedule s =
          to_explicit(ring_allreduce(spec(Collective::AllReduce, p, divisible), identity_rings(p, 1), 0));
      const double bytes = divisible * 4.0;
      const double want = 2.0 * (p - 1) * (alpha + bytes / (p * bandwidth));
      const double got = estimate_cost(s, t, free_reduction).total_s;
      EXPECT_NEAR(got, want, 1e-9 * want) << "P=" << p;
    }
  }
}

// The point-to-point collectives on a star, every transfer of a rank at once on its link. Alltoall: every
// rank sends (P-1)/P of its buffer in one step, α + (P-1)/P·S/B, and with K chunks per block
// store-and-forward (raw) pays the latency K times, a pipelined protocol once. Gather and scatter: the root's
// link carries the other ranks' (P-1)/P·S, the same time. Sendrecv: every link carries a whole buffer each
// way, α + S/B, however many channels split it.
TEST(Cost, PointToPointCollectivesMatchTheirClosedForms) {
  const double alpha = 5e-6, bandwidth = 12.5e9;
  const CostParams params{.reduce_Bps = 0, .copy_Bps = 0};
  CostParams simple = params;
  simple.protocol = Protocol::Simple;
  const ProtocolConstants& k = protocol_constants(Protocol::Simple);
  const double latency = std::max(alpha, k.step_latency_s[static_cast<int>(RouteClass::Network) - 1]);
  for (int p : {2, 3, 8, 16}) {
    const topo::Topology t = star(p, alpha / 2, bandwidth);
    const std::uint64_t count = 4096ULL * p;
    const double wire = (p - 1) * count * 4.0 / (p * bandwidth);
    const Schedule a2a = pairwise_alltoall(spec(Collective::AllToAll, p, count), p, 0);
    EXPECT_EQ(count_steps(a2a), 1) << p;
    for (std::uint64_t bytes : bytes_sent_per_rank(a2a))
      EXPECT_EQ(bytes, (p - 1) * count / p * 4) << p;
    EXPECT_NEAR(estimate_cost(a2a, t, params).total_s, alpha + wire, 1e-9 * (alpha + wire)) << p;
    const int chunks = 4;
    const Schedule chunked = pairwise_alltoall(spec(Collective::AllToAll, p, count), p, count / p / chunks);
    EXPECT_NEAR(estimate_cost(chunked, t, params).total_s, chunks * alpha + wire, 1e-9 * wire) << p;
    const double pipelined = k.launch_s + latency + wire / k.wire_efficiency;
    EXPECT_NEAR(estimate_cost(chunked, t, simple).total_s, pipelined, 1e-9 * pipelined) << p;
    for (int root : {0, p - 1}) {
      const Schedule g = direct_gather(spec(Collective::Gather, p, count, root), p, 0);
      const Schedule s = direct_scatter(spec(Collective::Scatter, p, count, root), p, 0);
      EXPECT_NEAR(estimate_cost(g, t, params).total_s, alpha + wire, 1e-9 * (alpha + wire)) << p;
      EXPECT_NEAR(estimate_cost(s, t, params).total_s, alpha + wire, 1e-9 * (alpha + wire)) << p;
      EXPECT_EQ(bytes_sent_per_rank(s)[root], (p - 1) * count / p * 4) << p;
    }
    const double shift = alpha + count * 4.0 / bandwidth;
    for (int channels : {1, 4})
      EXPECT_NEAR(
          estimate_cost(shift_sendrecv(spec(Collective::SendRecv, p, count), channels, 0), t, params).total_s,
          shift, 1e-9 * shift)
          << p << " " << channels;
  }
}

// The hypercube allgather (nccl-tests' hypercube_perf): log2 P exchanges, each a kernel after the one before
// it, so on a star step k pays its messages' α and its 2^k blocks: log2 P·α + (P−1)/P·S/B unchunked, on one
// channel or split over four. Chunked, step k sends 2^k·K chunks one after another on a channel, so the
// whole is K(P−1)·α + the bytes — which holds only if no step starts before the one before it ends: without
// the stream's order a step would send the blocks it held already while the last ones still arrive.
TEST(Cost, HypercubeAllgatherMatchesItsClosedForm) {
  const double alpha = 5e-6, bandwidth = 12.5e9;
  const CostParams params{.reduce_Bps = 0, .copy_Bps = 0};
  for (int p : {2, 4, 8, 16}) {
    const topo::Topology t = star(p, alpha / 2, bandwidth);
    const std::uint64_t count = 4096ULL * p;
    const double wire = (p - 1) * count * 4.0 / (p * bandwidth);
    const int steps = std::countr_zero(static_cast<unsigned>(p));
    for (int channels : {1, 4}) {
      const Schedule h = hypercube_allgather(spec(Collective::AllGather, p, count), channels, 0);
      const auto error = verify(h);
      ASSERT_FALSE(error) << p << ": " << *error;
      EXPECT_EQ(count_steps(h), steps) << p;
      for (std::uint64_t bytes : bytes_sent_per_rank(h))
        EXPECT_EQ(bytes, (p - 1) * count / p * 4) << p;
      const double want = steps * alpha + wire;
      EXPECT_NEAR(estimate_cost(h, t, params).total_s, want, 1e-9 * want) << p << " " << channels;
    }
    const std::uint64_t chunks = 4;
    const Schedule chunked =
        hypercube_allgather(spec(Collective::AllGather, p, count), 1, count / p / chunks);
    const double want = chunks * (p - 1) * alpha + wire;
    EXPECT_NEAR(estimate_cost(chunked, t, params).total_s, want, 1e-9 * want) << p;
    // Under NCCL's protocols each step is a group of its own, a kernel launched after the last: log2 P
    // launches, where a collective pays one.
    Schedule h = hypercube_allgather(spec(Collective::AllGather, p, count), 1, 0);
    EXPECT_EQ(h.kernels, steps) << p;
    CostParams simple = params;
    simple.protocol = Protocol::Simple;
    const double launch_s = protocol_constants(Protocol::Simple, AlgorithmFamily::P2p).launch_s;
    const double with_launches = estimate_cost(h, t, simple).total_s;
    h.kernels = 1;
    EXPECT_NEAR(with_launches - estimate_cost(h, t, simple).total_s, (steps - 1) * launch_s, 1e-12) << p;
  }
  // The compact form, both file forms and the explicit expansion keep the count, and the compact costing
  // charges it as the explicit walk does.
  const topo::Topology t = topo::make_preset("dgx_h100:2");
  const CompactSchedule c = require_algorithm(Collective::AllGather, "hypercube")
                                .compact(spec_for(t, Collective::AllGather, 1 << 16, DType::F32), t, {});
  EXPECT_EQ(c.params.kernels, 4);
  EXPECT_EQ(compact_from_json(compact_to_json(c)).params.kernels, 4);
  const Schedule x = to_explicit(c);
  EXPECT_EQ(x.kernels, 4);
  EXPECT_EQ(schedule_from_json(schedule_to_json(x)).kernels, 4);
  CostParams simple;
  simple.protocol = Protocol::Simple;
  const double compact_s = estimate_compact_cost(c, t, simple).total_s;
  EXPECT_NEAR(compact_s, estimate_cost(x, t, simple).total_s, 1e-9 * compact_s);
  CompactSchedule one = c;
  one.params.kernels = 1;
  EXPECT_NEAR(compact_s - estimate_compact_cost(one, t, simple).total_s,
              3 * protocol_constants(Protocol::Simple, AlgorithmFamily::P2p).launch_s, 1e-9 * compact_s);
}

// NCCL's send/receive path runs LL or Simple, never LL128 (src/enqueue.cc): the point-to-point plans are
// their own family, which `auto` prices under those two and which refuses LL128 when asked for it.
TEST(Cost, PointToPointRunsUnderLlOrSimpleOnly) {
  EXPECT_EQ(algorithm_family(Collective::AllToAll, "pairwise"), AlgorithmFamily::P2p);
  EXPECT_EQ(algorithm_family(Collective::Gather, "direct"), AlgorithmFamily::P2p);
  EXPECT_EQ(algorithm_family(Collective::SendRecv, "shift"), AlgorithmFamily::P2p);
  EXPECT_EQ(algorithm_family(Collective::AllGather, "hypercube"), AlgorithmFamily::P2p);
  EXPECT_EQ(algorithm_family(Collective::AllGather, "ring"), AlgorithmFamily::Ring);
  EXPECT_TRUE(family_runs(AlgorithmFamily::P2p, Protocol::LL));
  EXPECT_TRUE(family_runs(AlgorithmFamily::P2p, Protocol::Simple));
  EXPECT_FALSE(family_runs(AlgorithmFamily::P2p, Protocol::LL128));
  EXPECT_THROW(protocol_constants(Protocol::LL128, AlgorithmFamily::P2p), ConfigError);
  const topo::Topology t = topo::make_preset("dgx_h100:1");
  CostParams automatic;
  automatic.protocol = Protocol::Auto;
  // 256 KiB to 16 MiB: where a ring on Hopper runs LL128, the same bytes sent point to point do not.
  for (std::uint64_t count : {std::uint64_t{1} << 16, std::uint64_t{1} << 20, std::uint64_t{1} << 22}) {
    const Schedule shift =
        shift_sendrecv(spec(Collective::SendRecv, 8, count), 24, chunk_elems(1 << 20, DType::F32));
    std::set<Protocol> costed;
    for (const ProtocolRun& r : estimate_cost_by_protocol(shift, t, automatic))
      costed.insert(r.protocol);
    // NCCL's per-transfer rule (the test below): these transfers are past LL's 16 KiB.
    EXPECT_EQ(costed, (std::set<Protocol>{Protocol::Simple})) << count;
    const Schedule ring = to_explicit(ring_allgather(
        spec(Collective::AllGather, 8, count), identity_rings(8, 24), chunk_elems(1 << 20, DType::F32)));
    EXPECT_EQ(estimate_cost_by_protocol(ring, t, automatic).size(), 3u) << count;
  }
  CostParams ll128;
  ll128.protocol = Protocol::LL128;
  EXPECT_THROW(estimate_cost(shift_sendrecv(spec(Collective::SendRecv, 8, 1024), 1, 0), t, ll128),
               ConfigError);
}

// NCCL decides a point-to-point transfer's protocol by its size, not by a cost (src/enqueue.cc,
// addP2pToPlan): LL when the transfer is at most 16 KiB per channel, on channels counted from parts of at
// least 64 KiB on NVLink and across nodes (16 KiB on a PCIe node). So an alltoall of 32 KiB blocks runs under
// Simple on an H100 node even where LL would be faster, and `auto` costs what NCCL runs.
TEST(Cost, PointToPointProtocolIsNcclsPerTransferRule) {
  constexpr std::uint64_t KiB = 1024;
  // Channels: one per 64 KiB (NVLink node, or across nodes) or 16 KiB (PCIe node) up to the peer's channels.
  EXPECT_EQ(nccl_p2p_channels(8 * KiB, 1, true, 4), 1);
  EXPECT_EQ(nccl_p2p_channels(128 * KiB, 1, true, 4), 2);
  EXPECT_EQ(nccl_p2p_channels(64 * KiB * KiB, 1, true, 4), 4);
  EXPECT_EQ(nccl_p2p_channels(64 * KiB, 1, false, 4), 4);
  EXPECT_EQ(nccl_p2p_channels(1024 * KiB, 2, true, 8), 8);
  EXPECT_EQ(nccl_p2p_channels(0, 2, true, 8), 1);
  EXPECT_EQ(nccl_p2p_protocol(16 * KiB, 1, true, 8), Protocol::LL);
  EXPECT_EQ(nccl_p2p_protocol(16 * KiB + 4, 1, true, 8), Protocol::Simple);
  EXPECT_EQ(nccl_p2p_protocol(16 * KiB, 4, true, 8), Protocol::LL);
  EXPECT_EQ(nccl_p2p_protocol(32 * KiB, 4, true, 8), Protocol::Simple);
  EXPECT_EQ(nccl_p2p_protocol(64 * KiB, 1, false, 4), Protocol::LL);  // 16 KiB on each of 4 channels
  EXPECT_EQ(nccl_p2p_protocol(64 * KiB + 4, 1, false, 4), Protocol::Simple);

  const topo::Topology node = topo::make_preset("dgx_h100:1");
  CostParams automatic, ll;
  automatic.protocol = Protocol::Auto;
  ll.protocol = Protocol::LL;
  auto alltoall = [](std::uint64_t block_bytes) {
    return pairwise_alltoall(spec(Collective::AllToAll, 8, 8 * block_bytes / 4), 16, 0);
  };
  auto costed = [&](const Schedule& s, const topo::Topology& t, const CostParams& p) {
    std::vector<Protocol> out;
    for (const ProtocolRun& r : estimate_cost_by_protocol(s, t, p))
      out.push_back(r.protocol);
    return out;
  };
  EXPECT_EQ(costed(alltoall(16 * KiB), node, automatic), std::vector<Protocol>{Protocol::LL});
  const Schedule blocks_32k = alltoall(32 * KiB);
  EXPECT_EQ(costed(blocks_32k, node, automatic), std::vector<Protocol>{Protocol::Simple});
  // The rule, not the cost, decided: LL alone would have been faster there.
  EXPECT_LT(estimate_cost(blocks_32k, node, ll).total_s, estimate_cost(blocks_32k, node, automatic).total_s);
  // Across two nodes the same threshold holds.
  const topo::Topology two = topo::make_preset("dgx_h100:2");
  auto alltoall16 = [](std::uint64_t block_bytes) {
    return pairwise_alltoall(spec(Collective::AllToAll, 16, 16 * block_bytes / 4), 16, 0);
  };
  EXPECT_EQ(costed(alltoall16(16 * KiB), two, automatic), std::vector<Protocol>{Protocol::LL});
  EXPECT_EQ(costed(alltoall16(64 * KiB), two, automatic), std::vector<Protocol>{Protocol::Simple});
  // A run that left LL out (NCCL_PROTO=Simple in its log) gets Simple at any size.
  CostParams no_ll = automatic;
  no_ll.auto_protocols = protocol_bit(Protocol::Simple);
  EXPECT_EQ(costed(alltoall(16 * KiB), node, no_ll), std::vector<Protocol>{Protocol::Simple});
  // The compact form's costing follows the same rule.
  const CompactSchedule compact =
      require_algorithm(Collective::AllToAll, "pairwise")
          .compact(spec_for(node, Collective::AllToAll, 8 * 8 * KiB, DType::F32), node, {});
  const std::vector<ProtocolRun> runs = estimate_compact_cost_by_protocol(compact, node, automatic);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].protocol, Protocol::Simple);  // 32 KiB blocks
}

TEST(Cost, PipelinedChainBroadcastMatchesTextbookPipeline) {
  const double alpha = 2e-6, bandwidth = 25e9;
  const int p = 8;
  const topo::Topology t = star(p, alpha / 2, bandwidth);
  const std::uint64_t count = 1 << 24;
  std::vector<int> chain(p);
  for (int r = 0; r < p; ++r)
    chain[r] = r;
  const CostParams params{.reduce_Bps = 0, .copy_Bps = 0};
  const double one_chunk =
      estimate_cost(chain_broadcast(spec(Collective::Broadcast, p, count), {chain}, 0), t, params).total_s;
  const std::uint64_t k = 64;
  const double pipelined =
      estimate_cost(chain_broadcast(spec(Collective::Broadcast, p, count), {chain}, count / k), t, params)
          .total_s;
  const double bytes = count * 4.0;
  EXPECT_NEAR(one_chunk, (p - 1) * (alpha + bytes / bandwidth), 1e-9);
  EXPECT_NEAR(pipelined, (p - 1 + k - 1) * (alpha + bytes / k / bandwidth), 1e-9);
}

// Under an NCCL protocol a message costs the protocol's step latency (network class on this star: 14 µs for
// Simple, 4 µs for LL128, 2.7 µs for LL, against the 5 µs route) and the wire at the protocol's efficiency,
// and the launch cost comes first: a one-chunk ring takes launch + 2(P-1)·(L + S/(P·B·efficiency)). A
// connection's messages pipeline on the wire and its receiver has buffers posted ahead, so a K-chunk chain
// broadcast is the ideal pipeline launch + (P-1)·L + (P-1+K-1)·w, w = S/(K·B·efficiency) — the latency paid
// once per hop, where store-and-forward pays (P-1+K-1)·(L + w).
TEST(Cost, ProtocolsMatchTheirClosedForms) {
  const double alpha = 5e-6, bandwidth = 12.5e9;
  for (Protocol protocol : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
    const ProtocolConstants& k = protocol_constants(protocol);
    const double latency = std::max(alpha, k.step_latency_s[static_cast<int>(RouteClass::Network) - 1]);
    CostParams params{.reduce_Bps = 0, .copy_Bps = 0};
    params.protocol = protocol;
    for (int p : {2, 3, 8, 16}) {
      const topo::Topology t = star(p, alpha / 2, bandwidth);
      const std::uint64_t count = 4096ULL * p;
      const Schedule ring =
          to_explicit(ring_allreduce(spec(Collective::AllReduce, p, count), identity_rings(p, 1), 0));
      const double w = count * 4.0 / (p * bandwidth * k.wire_efficiency);
      const double want = k.launch_s + 2.0 * (p - 1) * (latency + w);
      EXPECT_NEAR(estimate_cost(ring, t, params).total_s, want, 1e-9 * want) << to_string(protocol) << p;

      std::vector<int> order(p);
      for (int r = 0; r < p; ++r)
        order[r] = r;
      const int chunks = 16;
      const Schedule chain = chain_broadcast(spec(Collective::Broadcast, p, count), {order}, count / chunks);
      const double wc = count * 4.0 / (chunks * bandwidth * k.wire_efficiency);
      const double ideal = k.launch_s + (p - 1) * latency + (p - 1 + chunks - 1) * wc;
      const double store_and_forward = k.launch_s + (p - 1 + chunks - 1) * (latency + wc);
      const double got = estimate_cost(chain, t, params).total_s;
      EXPECT_NEAR(got, ideal, 1e-9 * ideal) << to_string(protocol) << p;
      EXPECT_LT(got, store_and_forward) << to_string(protocol) << p;
    }
  }
}

// NCCL's LL and LL128 ceilings per GPU architecture: a bandwidth-bound ring under LL reaches llMaxBws (the
// bus bandwidth of the whole ring) and under LL128 perChMaxRingLL128Bws per channel, no more; with the
// architecture unknown, nothing caps them. Values: NCCL 2.30 tuning.cc (Hopper one node 141 GB/s LL, 36.7
// GB/s per channel LL128; Ampere 87.7). Across nodes NCCL reads LL's ceiling by host CPU, not by GPU: two
// nodes of Intel hosts (DGX H100) 39, of AMD hosts (DGX A100, or the H100 nodes said to have AMD hosts) 22.5;
// the Hopper row's own 45 is never read.
TEST(Cost, ProtocolCeilingsFollowTheGpuArchitecture) {
  auto busbw = [](const topo::Topology& t, Protocol protocol) {
    CostParams params;
    params.protocol = protocol;
    const CollectiveSpec s = spec_for(t, Collective::AllReduce, std::uint64_t{1} << 28, DType::F32);
    const CompactSchedule ring = require_algorithm(Collective::AllReduce, "ring").compact(s, t, {});
    const double seconds = estimate_compact_cost(ring, t, params).total_s;
    return std::pair{s.bytes() / seconds * 2.0 * (s.world_size - 1) / s.world_size, ring.num_channels()};
  };
  struct Case {
    const char* preset;
    double ll_GBps, ll128_per_channel_GBps;
  };
  for (const Case& c :
       {Case{"dgx_h100:1", 141.0, 36.7}, Case{"dgx_a100:1", 87.7, 20.0}, Case{"dgx_h100:2", 39.0, 36.7},
        Case{"dgx_a100:2", 22.5, 20.0}, Case{"dgx_h100:2 amd", 22.5, 36.7}}) {
    const std::string name = c.preset;
    topo::Topology t = topo::make_preset(name.substr(0, name.find(' ')));
    if (name.ends_with(" amd")) t.set_host_cpu(topo::HostCpu::Amd);
    const auto [ll, channels] = busbw(t, Protocol::LL);
    EXPECT_LE(ll, c.ll_GBps * 1e9 * (1 + 1e-9)) << c.preset;
    EXPECT_GT(ll, 0.9 * c.ll_GBps * 1e9) << c.preset;  // 1 GiB is bandwidth-bound: the ceiling binds
    const auto [ll128, unused] = busbw(t, Protocol::LL128);
    EXPECT_LE(ll128, c.ll128_per_channel_GBps * 1e9 * channels * (1 + 1e-9)) << c.preset;
    t.set_gpu_arch(std::nullopt);
    EXPECT_GT(busbw(t, Protocol::LL).first, 1.2 * ll) << c.preset << ": no architecture, no ceiling";
    EXPECT_GE(busbw(t, Protocol::LL128).first, ll128) << c.preset;
  }
}

// NCCL runs a small ring or tree collective on fewer thread blocks than it has channels (enqueue.cc,
// topoGetAlgoInfo): one per 4 KiB times the ranks under a ring's LL, 4 KiB under a tree's, 5 KiB under LL128
// and 32 KiB under Simple. The α-β model holds the schedule's channels to that many blocks' speed together.
TEST(Cost, SmallCollectivesRunOnFewerThreadBlocks) {
  constexpr std::uint64_t KiB = 1024;
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::LL, 32 * KiB, 8, 24), 1);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::LL, 256 * KiB, 8, 24), 8);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::LL, 256 * KiB, 64, 24), 1);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::LL, KiB * KiB * KiB, 8, 24), 24);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::LL128, 50 * KiB, 8, 24), 10);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::Simple, 64 * KiB, 8, 24), 2);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Tree, Protocol::LL, 16 * KiB, 16, 8), 4);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::LL, 8, 8, 24), 1);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Nvls, Protocol::Simple, 8, 8, 16), 16);
  EXPECT_EQ(nccl_collective_channels(AlgorithmFamily::Ring, Protocol::Raw, 8, 8, 16), 16);

  const topo::Topology t = topo::make_preset("dgx_h100:1");
  const double block_Bps = channel_speed_cap_Bps(topo::GpuArch::Hopper, false);
  auto block_cap = [&](std::uint64_t bytes, Protocol protocol, bool sized) {
    const CompactSchedule ring =
        require_algorithm(Collective::AllReduce, "ring")
            .compact(spec_for(t, Collective::AllReduce, bytes / 4, DType::F32), t, {});
    ConnectionCosts costs(t, 1, AlgorithmFamily::Ring, sized ? ring.spec.bytes() : 0, ring.world_size());
    declare_connections(ring, costs);
    costs.finish(protocol);
    return std::pair{costs.block_cap_Bps(RouteClass::NvLink), ring.num_channels()};
  };
  const auto [simple_64k, channels] = block_cap(64 * KiB, Protocol::Simple, true);
  ASSERT_GT(channels, 2);
  EXPECT_DOUBLE_EQ(simple_64k, block_Bps * 2 / channels);
  EXPECT_DOUBLE_EQ(block_cap(64 * KiB, Protocol::LL128, true).first,
                   block_Bps * std::min(12, channels) / channels);
  EXPECT_DOUBLE_EQ(block_cap(64 * KiB, Protocol::Simple, false).first, block_Bps);  // size not given
  EXPECT_DOUBLE_EQ(block_cap(KiB * KiB * KiB, Protocol::Simple, true).first, block_Bps);
  // Priced end to end, 32 KiB under LL (one block) takes at least its launch and its bus bytes at one block's
  // LL payload rate.
  CostParams ll;
  ll.protocol = Protocol::LL;
  const CompactSchedule ring = require_algorithm(Collective::AllReduce, "ring")
                                   .compact(spec_for(t, Collective::AllReduce, 8 * KiB, DType::F32), t, {});
  const double seconds = estimate_compact_cost(ring, t, ll).total_s;
  const double bus_bytes = 2.0 * 7 / 8 * 32 * KiB;
  EXPECT_GT(
      seconds,
      protocol_constants(Protocol::LL, AlgorithmFamily::Ring).launch_s +
          bus_bytes / (block_Bps * protocol_constants(Protocol::LL, AlgorithmFamily::Ring).wire_efficiency));
}

// NCCL prices its tree kernels with their own row of constants (tuning.cc): a tree allreduce pays the tree's
// step latencies (network LL 5.0 µs against the ring's 2.7) and its bandwidth factors (Simple 0.92, LL
// 0.92/3.8), capped per channel by perChMaxTreeBws (Hopper, more than two nodes: 36 GB/s). The same schedule
// priced as a ring family (renamed) shows what the tree row alone changes.
TEST(Cost, TreesPayTheTreeRowOfNcclsConstants) {
  EXPECT_EQ(algorithm_family(Collective::AllReduce, "tree"), AlgorithmFamily::Tree);
  EXPECT_EQ(algorithm_family(Collective::AllReduce, "ring"), AlgorithmFamily::Ring);
  EXPECT_EQ(algorithm_family(Collective::Broadcast, "tree"), AlgorithmFamily::Ring);  // NCCL: ring only
  EXPECT_DOUBLE_EQ(protocol_constants(Protocol::LL, AlgorithmFamily::Tree).step_latency_s[2], 5.0e-6);
  EXPECT_DOUBLE_EQ(protocol_constants(Protocol::LL, AlgorithmFamily::Ring).step_latency_s[2], 2.7e-6);
  auto time = [](const topo::Topology& t, std::uint64_t count, Protocol protocol, bool as_ring) {
    CostParams params;
    params.protocol = protocol;
    CompactSchedule tree = require_algorithm(Collective::AllReduce, "tree")
                               .compact(spec_for(t, Collective::AllReduce, count, DType::F32), t, {});
    if (as_ring) tree.algorithm = "tree_priced_as_ring";
    return estimate_compact_cost(tree, t, params).total_s;
  };
  // A few bytes under LL128 inside one node: the tree is a chain of 7 NVLink hops up and 7 down, each
  // 1.25 µs in the tree row against 1.9 µs in the ring row.
  const topo::Topology one = topo::make_preset("dgx_h100:1");
  EXPECT_NEAR(time(one, 16, Protocol::LL128, true) - time(one, 16, Protocol::LL128, false), 14 * 0.65e-6,
              0.1 * 14 * 0.65e-6);
  // Across 4 nodes the network steps (8.5 µs against 4.0) outweigh that.
  const topo::Topology t = topo::make_preset("dgx_h100:4");
  EXPECT_GT(time(t, 16, Protocol::LL128, false), time(t, 16, Protocol::LL128, true));
  // A gigabyte under Simple: bandwidth-bound, at most the tree's per-channel ceiling times the channels.
  const std::uint64_t count = std::uint64_t{1} << 28;
  const double big_tree = time(t, count, Protocol::Simple, false);
  EXPECT_GT(big_tree, time(t, count, Protocol::Simple, true));
  const int channels = require_algorithm(Collective::AllReduce, "tree")
                           .compact(spec_for(t, Collective::AllReduce, count, DType::F32), t, {})
                           .num_channels();         // network channels
  const double algbw_Bps = count * 4.0 / big_tree;  // each channel carries the buffer / channels
  EXPECT_LE(algbw_Bps / channels, 36.0e9 * (1 + 1e-9));
}

// Auto costs each NCCL protocol and keeps the cheapest: LL for a few bytes (lowest latency), Simple for a
// gigabyte (all of the wire); never LL128 where a node's GPUs talk over PCIe; raw is the route alone.
TEST(Cost, AutoProtocolTakesTheCheapest) {
  const topo::Topology nvswitch = topo::make_preset("dgx_h100:1");
  CostParams automatic;
  automatic.protocol = Protocol::Auto;
  auto by_protocol = [&](const topo::Topology& t, std::uint64_t count) {
    const Schedule s = to_explicit(
        ring_allreduce(spec_for(t, Collective::AllReduce, count, DType::F32), identity_rings(8, 1), 0));
    return std::pair{estimate_cost_by_protocol(s, t, automatic), estimate_cost(s, t, automatic)};
  };
  for (std::uint64_t count : {std::uint64_t{2}, std::uint64_t{1} << 28}) {
    const auto [runs, best] = by_protocol(nvswitch, count);
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].protocol, Protocol::LL);
    EXPECT_EQ(runs[1].protocol, Protocol::LL128);
    EXPECT_EQ(runs[2].protocol, Protocol::Simple);
    const ProtocolRun chosen = cheapest(runs);
    EXPECT_EQ(chosen.protocol, count == 2 ? Protocol::LL : Protocol::Simple) << count;
    EXPECT_DOUBLE_EQ(best.total_s, chosen.run.total_s);
    for (const ProtocolRun& r : runs)
      EXPECT_GE(r.run.total_s, best.total_s);
  }
  const auto [pcie_runs, pcie_best] = by_protocol(topo::make_preset("pcie_server:1,gpus=8"), 1024);
  ASSERT_EQ(pcie_runs.size(), 2u);
  EXPECT_EQ(pcie_runs[0].protocol, Protocol::LL);
  EXPECT_EQ(pcie_runs[1].protocol, Protocol::Simple);
  // Every protocol costs at least the launch and is slower than the bare route for a tiny message.
  const Schedule tiny = to_explicit(
      ring_allreduce(spec_for(nvswitch, Collective::AllReduce, 2, DType::F32), identity_rings(8, 1), 0));
  const double raw = estimate_cost(tiny, nvswitch).total_s;
  for (const ProtocolRun& r : estimate_cost_by_protocol(tiny, nvswitch, automatic))
    EXPECT_GT(r.run.total_s, raw + protocol_constants(r.protocol).launch_s) << to_string(r.protocol);
  EXPECT_EQ(parse_protocol("ll128"), Protocol::LL128);
  EXPECT_EQ(parse_protocol("LL"), std::nullopt);
  EXPECT_THROW(protocol_constants(Protocol::Auto), ConfigError);
}

// The one `auto`: each candidate planned and checked once, the winner being the table's own plan.
TEST(Selection, PlansEachCandidateOnceAndReusesTheWinner) {
  const topo::Topology t = topo::make_preset("dgx_a100:2");
  const CollectiveSpec s = spec_for(t, Collective::AllReduce, 1 << 22, DType::F32);
  int planned = 0;
  Selector selector({}, [&](const CompactSchedule&) { ++planned; });
  const std::vector<Candidate> rows = selector.table(s, t);
  const int applicable = static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [](const Candidate& c) { return c.support.ok; }));
  EXPECT_EQ(planned, applicable);
  const Candidate& best = selector.choose(s, t, "auto");
  ASSERT_TRUE(best.support.ok);
  for (const Candidate& row : rows) {
    if (row.support.ok) {
      EXPECT_GE(row.time_s, best.time_s) << row.algorithm;
    }
    if (row.algorithm == best.algorithm) {
      EXPECT_EQ(row.schedule, best.schedule);  // the same plan, not a new one
    }
  }
  EXPECT_EQ(&selector.choose(s, t, best.algorithm), &best);
  EXPECT_EQ(planned, applicable);  // nothing planned again
  // Another size is another key: planned anew.
  (void)selector.choose(spec_for(t, Collective::AllReduce, 1 << 10, DType::F32), t, "ring");
  EXPECT_EQ(planned, applicable + 1);
  EXPECT_THROW(selector.choose(s, t, "no_such_algorithm"), ConfigError);
}

// `auto` skips a candidate only when its lower bound shows it cannot win: every bound stays at or below its
// candidate's α-β time, and the choice equals the cheapest of the fully costed table, on single- and
// multi-node presets, NVLink meshes, PCIe servers and an oversubscribed fabric, small to large sizes, under
// the raw model and NCCL's protocols.
TEST(Selection, AutoSkipsOnlyCandidatesThatCannotWin) {
  int skipped = 0, bounded = 0;
  for (const char* preset :
       {"dgx_a100:2", "dgx_h100:4", "dgx_h100:3,fabric=rail", "dgx1_v100:2", "pcie_server:3,gpus=2",
        "pcie_server:4,gpus=3,fabric=leaf_spine,leaf_size=2,oversub=2"}) {
    const topo::Topology t = topo::make_preset(preset);
    for (std::uint64_t count :
         {std::uint64_t{2}, std::uint64_t{1} << 14, std::uint64_t{1} << 22, (std::uint64_t{1} << 26) + 3}) {
      const CollectiveSpec s = spec_for(t, Collective::AllReduce, count, DType::F32);
      for (Protocol protocol : {Protocol::Raw, Protocol::LL, Protocol::Simple, Protocol::Auto}) {
        CostParams cost;
        cost.protocol = protocol;
        const std::string what = fmt::format("{} count {} protocol {}", preset, count, to_string(protocol));
        const MessageBounds bounds(t, cost);
        Selector full(cost);
        const Candidate* cheapest = nullptr;
        for (const Candidate& row : full.table(s, t)) {
          if (!row.support.ok) continue;
          const Algorithm& a = require_algorithm(Collective::AllReduce, row.algorithm);
          const double bound =
              a.unplanned_bound ? a.unplanned_bound(s, bounds) : compact_lower_bound_s(*row.schedule, bounds);
          EXPECT_LE(bound, row.time_s * (1 + 1e-12)) << what << ": " << row.algorithm;
          bounded += bound > 0;
          const Candidate& cached = full.choose(s, t, row.algorithm);
          if (!cheapest || cached.time_s < cheapest->time_s) cheapest = &cached;
        }
        ASSERT_NE(cheapest, nullptr) << what;
        Selector pruning(cost);
        for (const Candidate& row : pruning.auto_table(s, t))
          skipped += row.pruned;
        const Candidate& chosen = pruning.choose(s, t, "auto");
        EXPECT_EQ(chosen.algorithm, cheapest->algorithm) << what;
        EXPECT_EQ(chosen.time_s, cheapest->time_s) << what;
      }
    }
  }
  EXPECT_GT(skipped, 100) << skipped;  // the bounds do prune
  EXPECT_GT(bounded, 200) << bounded;
}

TEST(Selection, PicksTheCheapestAndExplainsTheRest) {
  const topo::Topology t = topo::make_preset("pcie_server:3,gpus=2");
  const CollectiveSpec s = spec_for(t, Collective::AllReduce, 1 << 20, DType::F32);
  const auto rows = cost_table(s, t);
  ASSERT_EQ(rows.size(), algorithms_for(Collective::AllReduce).size());
  double best = 1e300;
  std::string best_name;
  for (const auto& row : rows)
    if (row.support.ok && row.time_s < best) best = row.time_s, best_name = row.algorithm;
  EXPECT_EQ(select_algorithm(s, t), best_name);
  // Hierarchical needs equal nodes: build an uneven topology by hand and check it says why.
  topo::Topology uneven("uneven");
  const auto sw = uneven.add_vertex(topo::Vertex{"sw", topo::VertexKind::Switch});
  for (auto [node, local] : std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}}) {
    const auto g = uneven.add_vertex(
        topo::Vertex{fmt::format("g{}{}", node, local), topo::VertexKind::Gpu, node, local});
    uneven.add_link(g, sw, topo::LinkKind::Pcie, 1e10, 1e-6);
  }
  const Planned p =
      plan_collective(spec_for(uneven, Collective::AllReduce, 64, DType::F32), uneven, "hierarchical");
  EXPECT_FALSE(p.schedule);
  EXPECT_NE(p.reason.find("different GPU counts"), std::string::npos) << p.reason;
}

// "nccl" and NCCL_ALGO names select among the algorithms NCCL runs; what it leaves out (halving-doubling,
// hierarchical, leader) are cclab's own, which `auto` may pick where NCCL could not.
TEST(Selection, NcclNamesSelectAmongNcclsAlgorithms) {
  auto names = [](Collective c, std::string_view name) {
    std::vector<std::string> out;
    if (auto list = selection_candidates(c, name))
      for (const Algorithm* a : *list)
        out.push_back(a->name);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(Collective::AllReduce, "nccl"),
            (V{"ring", "tree", "nvls", "nvls_tree", "collnet", "collnet_chain", "nvls_sharp"}));
  EXPECT_EQ(names(Collective::AllReduce, "NVLS"), (V{"nvls", "nvls_sharp"}));
  EXPECT_EQ(names(Collective::AllReduce, "nvlstree"), V{"nvls_tree"});
  EXPECT_EQ(names(Collective::AllReduce, "CollNet"), V{"collnet"});
  EXPECT_EQ(names(Collective::AllReduce, "CollNetDirect"), V{"collnet"});
  EXPECT_EQ(names(Collective::AllReduce, "collnetchain"), V{"collnet_chain"});
  EXPECT_EQ(names(Collective::ReduceScatter, "PAT"), V{"pat"});
  EXPECT_EQ(names(Collective::Broadcast, "Ring"), V{"chain"});
  EXPECT_EQ(names(Collective::Broadcast, "nccl"), V{"chain"});
  // An alltoall is grouped send/receive in NCCL, which no NCCL_ALGO value selects: every selection has it.
  EXPECT_EQ(names(Collective::AllToAll, "nccl"), V{"pairwise"});
  EXPECT_EQ(names(Collective::AllToAll, "Ring"), V{"pairwise"});
  EXPECT_EQ(names(Collective::AllToAll, "^NVLS"), V{"pairwise"});
  EXPECT_FALSE(is_selection(Collective::AllToAll, "Bogus"));
  EXPECT_EQ(names(Collective::Gather, "nccl"), V{"direct"});
  EXPECT_EQ(names(Collective::Scatter, "Ring"), V{"direct"});
  EXPECT_EQ(names(Collective::SendRecv, "nccl"), V{"shift"});
  EXPECT_EQ(names(Collective::AllReduce, "auto").size(), algorithms_for(Collective::AllReduce).size());
  EXPECT_FALSE(is_selection(Collective::AllReduce, "ring"));  // a registry name is never a selection
  EXPECT_FALSE(
      is_selection(Collective::AllReduce, "PAT"));  // NCCL runs PAT for reduce-scatter/allgather only
  EXPECT_FALSE(is_selection(Collective::AllReduce, "Bogus"));
  // NCCL_ALGO's syntax: a list, or '^' and the names to leave out of NCCL's set; every name must be NCCL's.
  EXPECT_EQ(names(Collective::AllReduce, "Ring,Tree"), (V{"ring", "tree"}));
  EXPECT_EQ(names(Collective::AllReduce, "^NVLS,nvlstree"), (V{"ring", "tree", "collnet", "collnet_chain"}));
  EXPECT_EQ(names(Collective::AllReduce, "^CollNetChain,PAT"),
            (V{"ring", "tree", "nvls", "nvls_tree", "collnet", "nvls_sharp"}));  // PAT: not for allreduce
  EXPECT_EQ(names(Collective::AllReduce, "Ring,CollNetChain"), (V{"ring", "collnet_chain"}));
  EXPECT_EQ(names(Collective::AllReduce, "Ring,PAT"), V{"ring"});
  EXPECT_FALSE(is_selection(Collective::AllReduce, "Ring,Bogus"));
  EXPECT_FALSE(is_selection(Collective::AllReduce, "^Bogus"));
  EXPECT_FALSE(
      is_selection(Collective::AllReduce, "^Ring,Tree,NVLS,NVLSTree,CollNetDirect,CollNetChain"));  // none
  try {
    require_algorithm(Collective::AllReduce, "Bogus");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL_ALGO names: Ring, Tree, NVLS, NVLSTree, CollNetDirect"),
              std::string::npos)
        << e.what();
  }

  // On one A100 node auto takes cclab's own algorithms at some sizes (halving-doubling for small ones,
  // hierarchical in the middle); nccl takes the cheapest of NCCL's, never cheaper than auto.
  const topo::Topology a100 = topo::make_preset("dgx_a100:1");
  Selector selector;
  int differ = 0;
  for (const std::uint64_t count : {std::uint64_t{2}, std::uint64_t{1} << 10, std::uint64_t{1} << 22}) {
    const CollectiveSpec spec = spec_for(a100, Collective::AllReduce, count, DType::F32);
    const Candidate& any = selector.choose(spec, a100, "auto");
    const Candidate& nccl = selector.choose(spec, a100, "nccl");
    ASSERT_TRUE(any.support.ok && nccl.support.ok);
    EXPECT_TRUE(require_algorithm(Collective::AllReduce, nccl.algorithm).nccl.has_value()) << nccl.algorithm;
    EXPECT_GE(nccl.time_s, any.time_s);
    differ += require_algorithm(Collective::AllReduce, any.algorithm).nccl ? 0 : 1;
    for (const Candidate& row : selector.auto_table(spec, a100, {}, "nccl"))
      EXPECT_TRUE(require_algorithm(Collective::AllReduce, row.algorithm).nccl.has_value()) << row.algorithm;
  }
  EXPECT_GT(differ, 0);
  const topo::Topology h100 = topo::make_preset("dgx_h100:1");
  // NVLS is nvls inside a node and nvls_sharp across nodes with SHARP.
  const CollectiveSpec large = spec_for(h100, Collective::AllReduce, 1 << 28, DType::F32);
  EXPECT_EQ(selector.choose(large, h100, "NVLS").algorithm, "nvls");
  const topo::Topology sharp = topo::make_preset("dgx_h100:2,sharp=1");
  const CollectiveSpec across = spec_for(sharp, Collective::AllReduce, 1 << 28, DType::F32);
  EXPECT_EQ(selector.choose(across, sharp, "NVLS").algorithm, "nvls_sharp");
  const topo::Topology plain = topo::make_preset("dgx_h100:2");
  const CollectiveSpec no_sharp = spec_for(plain, Collective::AllReduce, 1 << 28, DType::F32);
  EXPECT_FALSE(selector.choose(no_sharp, plain, "NVLS").support.ok);
}

// NCCL's tuning model (engine/model/nccl_tuning.hpp), entries by hand from src/graph/tuning.cc on the graphs
// NCCL's search leaves (tests/ring_search_test.cpp checks those), and what `nccl` selections pick with it.
TEST(NcclTuning, EntriesAreNcclsFormulas) {
  auto comm_of = [](const char* preset) {
    const planners::NcclSearch s = planners::nccl_search(topo::make_preset(preset));
    EXPECT_TRUE(s.comm) << preset << ": " << s.why_not;
    return *s.comm;
  };
  const NcclTuningModel h100(comm_of("dgx_h100:1"));
  auto near = [](NcclTuningEntry e, double latency_us, double bandwidth_GBps, const char* what) {
    EXPECT_NEAR(e.latency_us, latency_us, 1e-9) << what;
    EXPECT_NEAR(e.bandwidth_GBps, bandwidth_GBps, 1e-9) << what;
  };
  // NVLS: 8 channels x min(40 x 0.85 x 7/8 x 2, bwInter 60) = 476 GB/s of bus bandwidth, times 8/14; its
  // latency is the NVLink row's 25 us alone.
  near(h100.entry(Collective::AllReduce, NcclAlgo::Nvls, Protocol::Simple), 25.0, 476.0 * 8 / 14, "nvls");
  // Ring Simple: 12 x 30 GB/s times 8/14; 8.4 us + 14 steps of 3.4.
  near(h100.entry(Collective::AllReduce, NcclAlgo::Ring, Protocol::Simple), 8.4 + 14 * 3.4, 360.0 * 8 / 14,
       "ring simple");
  // Ring LL: half the bus bandwidth, held to Hopper's 141 GB/s on one node.
  near(h100.entry(Collective::AllReduce, NcclAlgo::Ring, Protocol::LL), 6.6 + 14 * 0.6, 141.0 * 8 / 14,
       "ring ll");
  // Tree Simple: 0.92 of the bus bandwidth (under 12 x 38.7), half of it the algorithm's; a chain of 7 NVLink
  // hops up and down.
  near(h100.entry(Collective::AllReduce, NcclAlgo::Tree, Protocol::Simple), 8.4 + 2 * 7 * 4.0,
       360.0 * 0.92 / 2, "tree simple");
  // Allgather under NVLS: (ppn - 1) / ppn instead of 2, no ratio.
  near(h100.entry(Collective::AllGather, NcclAlgo::Nvls, Protocol::Simple), 25.0,
       8 * 40 * 0.85 * 7.0 / 8 * 7.0 / 8, "nvls allgather");
  // Off: NVLSTree on one node, LL under NVLS, PAT for an allreduce, collectives without a table.
  EXPECT_EQ(h100.entry(Collective::AllReduce, NcclAlgo::NvlsTree, Protocol::Simple).bandwidth_GBps, 0);
  EXPECT_EQ(h100.entry(Collective::AllReduce, NcclAlgo::Nvls, Protocol::LL).bandwidth_GBps, 0);
  EXPECT_EQ(h100.entry(Collective::AllReduce, NcclAlgo::Pat, Protocol::Simple).bandwidth_GBps, 0);
  EXPECT_EQ(h100.entry(Collective::AllToAll, NcclAlgo::Ring, Protocol::Simple).bandwidth_GBps, 0);
  EXPECT_FALSE(h100.time_us(Collective::AllToAll, NcclAlgo::Ring, Protocol::Simple, 1 << 20));

  // Two A100 nodes with 4 HDR NICs and AMD hosts: the ring's network posts cost 2 us each (x3 under Simple),
  // more than NVLink's 3.4; the ring's latency takes NCCL's plateau factor 1.4 across nodes.
  const NcclTuningModel a100(comm_of("dgx_a100:2,nics=4"));
  const NcclTuningEntry ring = a100.entry(Collective::AllReduce, NcclAlgo::Ring, Protocol::Simple);
  near(ring, 8.4 + 28 * 6.0 + 2 * 14.0, 96.0 * 16 / 30, "a100 ring");
  const std::uint64_t GiB4 = std::uint64_t{4} << 30, MiB4 = std::uint64_t{4} << 20;
  EXPECT_NEAR(*a100.time_us(Collective::AllReduce, NcclAlgo::Ring, Protocol::Simple, GiB4),
              ring.latency_us * 1.4 + GiB4 / (1000 * ring.bandwidth_GBps), 1e-6);
  // The tree: 4 x 48 x 0.92 held to 4 x 23.6 (Ampere, two nodes), half of it; at 4 MiB NCCL corrects it by
  // 0.7 (its table's entry for 2^16 x 64 bytes), at 4 GiB not at all.
  const NcclTuningEntry tree = a100.entry(Collective::AllReduce, NcclAlgo::Tree, Protocol::Simple);
  near(tree, 8.4 + 2 * (7 * 4.0 + 1 * 14.0), 4 * 23.6 / 2, "a100 tree");
  EXPECT_NEAR(*a100.time_us(Collective::AllReduce, NcclAlgo::Tree, Protocol::Simple, MiB4),
              tree.latency_us + MiB4 / (1000 * tree.bandwidth_GBps * 0.7), 1e-6);
  EXPECT_NEAR(*a100.time_us(Collective::AllReduce, NcclAlgo::Tree, Protocol::Simple, GiB4),
              tree.latency_us + GiB4 / (1000 * tree.bandwidth_GBps), 1e-6);
  EXPECT_EQ(nccl_algo_name(NcclAlgo::NvlsTree), "NVLSTree");
  EXPECT_EQ(parse_nccl_algo("collnet"), NcclAlgo::CollNetDirect);
  EXPECT_EQ(parse_nccl_algo("nvls"), NcclAlgo::Nvls);
  EXPECT_FALSE(parse_nccl_algo("hierarchical"));
}

TEST(NcclTuning, NcclSelectionsRunWhatNcclsModelPicks) {
  // Two A100 nodes with 4 NICs, 4 GiB: NCCL's estimate favours the ring (51.2 against the tree's 47.2 GB/s),
  // though the tree, which sends each node's data across the network once, is faster; `nccl` is NCCL's
  // choice, costed by cclab, and `auto` cclab's fastest.
  const topo::Topology a100 = topo::make_preset("dgx_a100:2,nics=4");
  const CollectiveSpec large = spec_for(a100, Collective::AllReduce, std::uint64_t{1} << 30, DType::F32);
  Selector selector(CostParams{.protocol = Protocol::Auto});
  const Candidate& nccl = selector.choose(large, a100, "nccl");
  const Candidate& tree = selector.choose(large, a100, "tree");
  ASSERT_TRUE(nccl.support.ok && tree.support.ok);
  EXPECT_EQ(nccl.algorithm, "ring");
  EXPECT_EQ(nccl.protocol, Protocol::Simple);
  EXPECT_LT(tree.time_s, nccl.time_s);
  ASSERT_FALSE(nccl.nccl_estimates.empty());
  const auto least = std::min_element(nccl.nccl_estimates.begin(), nccl.nccl_estimates.end(),
                                      [](const auto& x, const auto& y) { return x.time_us < y.time_us; });
  EXPECT_EQ(least->algorithm, "ring");
  EXPECT_EQ(least->protocol, Protocol::Simple);
  // NCCL's choice is costed under NCCL's protocol: the ring's Simple time, not its cheapest.
  const Candidate& ring = selector.choose(large, a100, "ring");
  const auto simple = std::find_if(ring.by_protocol.begin(), ring.by_protocol.end(),
                                   [](const auto& row) { return row.first == Protocol::Simple; });
  ASSERT_NE(simple, ring.by_protocol.end());
  EXPECT_DOUBLE_EQ(nccl.time_s, simple->second);

  // At 4 MiB NCCL runs the ring under LL128; with NCCL_PROTO=Simple its tree (corrected by 0.7) beats the
  // ring's Simple latency, so the protocol set moves the algorithm too.
  const CollectiveSpec mid = spec_for(a100, Collective::AllReduce, std::uint64_t{1} << 20, DType::F32);
  EXPECT_EQ(selector.choose(mid, a100, "nccl").algorithm, "ring");
  EXPECT_EQ(selector.choose(mid, a100, "nccl").protocol, Protocol::LL128);
  Selector simple_only(
      CostParams{.protocol = Protocol::Auto, .auto_protocols = protocol_bit(Protocol::Simple)});
  EXPECT_EQ(simple_only.choose(mid, a100, "nccl").algorithm, "tree");
  EXPECT_EQ(simple_only.choose(mid, a100, "nccl").protocol, Protocol::Simple);

  // Three GB200 partitions of 4 GPUs joined by InfiniBand, NVLS off (NVIDIA/nccl#1801, 16 GiB): NCCL ran the
  // ring although its tree was faster (196.7 against 234.4 GB/s of busbw); its model prices the ring at 164
  // ms (the run took 160).
  const topo::Topology gb200 = topo::make_preset("gb200_nvl72:3,gpus=4,nics=4");
  const CollectiveSpec sixteen = spec_for(gb200, Collective::AllReduce, std::uint64_t{1} << 32, DType::F32);
  const Candidate& nvls_off = selector.choose(sixteen, gb200, "^NVLS,NVLSTree");
  EXPECT_EQ(nvls_off.algorithm, "ring");
  EXPECT_LT(selector.choose(sixteen, gb200, "tree").time_s, nvls_off.time_s);

  // One H100 node: NVLS at 8 GiB, as NCCL runs it; the ring when NCCL_ALGO leaves NVLS out.
  const topo::Topology h100 = topo::make_preset("dgx_h100:1");
  const CollectiveSpec huge = spec_for(h100, Collective::AllReduce, std::uint64_t{1} << 31, DType::F32);
  EXPECT_EQ(selector.choose(huge, h100, "nccl").algorithm, "nvls");
  EXPECT_EQ(selector.choose(huge, h100, "^NVLS").algorithm, "ring");

  // Where NCCL decides per transfer, or cclab cannot reproduce its graphs, `nccl` is cclab's cheapest, and
  // says why.
  const CollectiveSpec a2a = spec_for(h100, Collective::AllToAll, 1 << 20, DType::F32);
  const Candidate& pairwise = selector.choose(a2a, h100, "nccl");
  ASSERT_TRUE(pairwise.support.ok);
  EXPECT_TRUE(pairwise.nccl_estimates.empty());
  EXPECT_NE(pairwise.nccl_note.find("per transfer"), std::string::npos) << pairwise.nccl_note;
  const topo::Topology pcie = topo::make_preset("pcie_server:1");
  const CollectiveSpec on_pcie = spec_for(pcie, Collective::AllReduce, 1 << 20, DType::F32);
  const Candidate& cheapest_on_pcie = selector.choose(on_pcie, pcie, "nccl");
  ASSERT_TRUE(cheapest_on_pcie.support.ok);
  EXPECT_NE(cheapest_on_pcie.nccl_note.find("cannot reproduce NCCL's graphs"), std::string::npos)
      << cheapest_on_pcie.nccl_note;
  double least_s = 1e30;
  for (const Candidate& row : selector.auto_table(on_pcie, pcie, {}, "nccl"))
    if (row.support.ok) least_s = std::min(least_s, row.time_s);
  EXPECT_DOUBLE_EQ(cheapest_on_pcie.time_s, least_s);
}

}  // namespace
}  // namespace cclab
