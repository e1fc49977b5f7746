#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "common/error.hpp"
#include "topology/presets.hpp"
#include "topology/yaml_io.hpp"

namespace cclab::topo {
namespace {

int count_kind(const Topology& t, VertexKind kind) {
  int n = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    n += t.vertex(v).kind == kind;
  return n;
}

bool passes_through_gpu(const Topology& t, const Route& r) {
  for (std::size_t i = 0; i + 1 < r.hops.size(); ++i) {
    const Link& l = t.link(r.hops[i].link);
    if (t.vertex(r.hops[i].forward ? l.b : l.a).kind == VertexKind::Gpu) return true;
  }
  return false;
}

// The partition check of failed links: one search from a GPU finds the GPUs it cannot reach, never routing
// through another GPU, and agrees with route().
TEST(Routing, UnreachableGpuAfterFailedLinks) {
  Topology t = make_preset("pcie_server:3,gpus=2,fabric=leaf_spine,leaf_size=1,spines=2");
  EXPECT_EQ(t.unreachable_gpu(t.gpus()[0]), std::nullopt);
  // Node 2's NIC loses its uplink: its GPUs still reach each other over PCIe, nobody else reaches them.
  std::size_t uplink = t.num_links();
  for (std::size_t l = 0; l < t.num_links(); ++l) {
    const Link& link = t.link(l);
    const std::string a = t.vertex(link.a).name, b = t.vertex(link.b).name;
    if ((a.starts_with("n2.nic") && !b.starts_with("n2.")) ||
        (b.starts_with("n2.nic") && !a.starts_with("n2.")))
      uplink = l;
  }
  ASSERT_LT(uplink, t.num_links());
  t.fail_link(uplink);
  const auto cut = t.unreachable_gpu(t.gpus()[0]);
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(t.vertex(*cut).name, t.vertex(t.gpus()[4]).name);
  EXPECT_THROW(t.route(t.gpus()[0], t.gpus()[4]), ConfigError);
  EXPECT_EQ(t.unreachable_gpu(t.gpus()[4]), t.gpus()[0]);
  EXPECT_NO_THROW(t.route(t.gpus()[4], t.gpus()[5]));
}

TEST(Presets, DgxA100Shape) {
  const Topology t = make_preset("dgx_a100:4");
  EXPECT_EQ(t.gpus().size(), 32u);
  EXPECT_EQ(t.num_nodes(), 4);
  EXPECT_EQ(count_kind(t, VertexKind::Nic), 32);
  EXPECT_EQ(count_kind(t, VertexKind::NvSwitch), 4);
  EXPECT_EQ(count_kind(t, VertexKind::PcieSwitch), 16);
  EXPECT_TRUE(t.uniform());
  // Ranks are (node, local rank) ordered.
  for (int r = 0; r < 32; ++r) {
    EXPECT_EQ(t.node_of_rank(r), r / 8);
    EXPECT_EQ(t.local_rank_of(r), r % 8);
  }
}

TEST(Presets, IntraNodeGoesThroughNvSwitchInterNodeThroughNics) {
  const Topology t = make_preset("dgx_a100:2");
  const Route intra = t.route_between_ranks(0, 5);
  ASSERT_EQ(intra.hops.size(), 2u);
  EXPECT_EQ(t.link(intra.hops[0].link).kind, LinkKind::NvSwitch);
  EXPECT_DOUBLE_EQ(intra.bottleneck_bandwidth_Bps, 300e9 * t.link_model(LinkKind::NvSwitch).efficiency);
  const Route inter = t.route_between_ranks(3, 12);
  EXPECT_FALSE(passes_through_gpu(t, inter));
  EXPECT_DOUBLE_EQ(inter.bottleneck_bandwidth_Bps,
                   25e9 * t.link_model(LinkKind::InfiniBand).efficiency);  // HDR
  bool crosses_ib = false;
  for (const Hop& h : inter.hops)
    crosses_ib |= t.link(h.link).kind == LinkKind::InfiniBand;
  EXPECT_TRUE(crosses_ib);
}

// DGX-1: a hybrid cube-mesh of direct NVLinks, no NVSwitch. V100: 6 links per GPU (25 GB/s each per
// direction), half of the 16 GPU pairs doubled; P100: 4 single links per GPU (20 GB/s). Both: 4 NICs.
TEST(Presets, Dgx1HybridCubeMesh) {
  for (const auto& [spec, per_gpu_Bps, doubled] :
       {std::tuple{"dgx1_v100:2", 150e9, 8}, std::tuple{"dgx1_p100:2", 80e9, 0}}) {
    const Topology t = make_preset(spec);
    EXPECT_EQ(t.gpus().size(), 16u);
    EXPECT_EQ(count_kind(t, VertexKind::Nic), 8);
    EXPECT_EQ(count_kind(t, VertexKind::NvSwitch), 0);
    std::map<VertexId, double> nvlink_Bps;
    int pairs = 0, double_pairs = 0;
    for (const Link& l : t.links()) {
      if (l.kind != LinkKind::NvLink) continue;
      ASSERT_EQ(t.vertex(l.a).kind, VertexKind::Gpu);
      ASSERT_EQ(t.vertex(l.b).kind, VertexKind::Gpu);
      ASSERT_EQ(t.vertex(l.a).node, t.vertex(l.b).node);
      nvlink_Bps[l.a] += l.bandwidth_Bps;
      nvlink_Bps[l.b] += l.bandwidth_Bps;
      ++pairs;
      double_pairs += l.bandwidth_Bps > 30e9 ? 1 : 0;
    }
    EXPECT_EQ(pairs, 32) << spec;  // 16 per node
    EXPECT_EQ(double_pairs, 2 * doubled) << spec;
    for (VertexId g : t.gpus())
      EXPECT_DOUBLE_EQ(nvlink_Bps[g], per_gpu_Bps) << spec << " " << t.vertex(g).name;
    // GPUs 3 and 4 share no NVLink: their route goes over PCIe and the CPUs' QPI, not through a GPU.
    const Route r = t.route_between_ranks(3, 4);
    EXPECT_FALSE(passes_through_gpu(t, r));
    EXPECT_EQ(t.link(r.hops[0].link).kind, LinkKind::Pcie);
  }
}

// The NVSwitch family: H200, B200, a GB200 NVL72 rack per node, and HGX-like counts of GPUs and NICs.
TEST(Presets, NvSwitchFamilyAndCounts) {
  const Topology b200 = make_preset("dgx_b200:1");
  EXPECT_DOUBLE_EQ(b200.route_between_ranks(0, 7).bottleneck_bandwidth_Bps, 900e9 * 0.8);
  const Topology h200 = make_preset("dgx_h200:2");
  EXPECT_EQ(count_kind(h200, VertexKind::Nic), 16);
  const Topology rack = make_preset("gb200_nvl72:2");
  EXPECT_EQ(rack.gpus().size(), 144u);
  EXPECT_EQ(rack.max_gpus_per_node(), 72);
  EXPECT_EQ(count_kind(rack, VertexKind::Nic), 144);
  const Topology hgx = make_preset("dgx_h100:3,gpus=4,nics=2");
  EXPECT_EQ(hgx.gpus().size(), 12u);
  EXPECT_EQ(count_kind(hgx, VertexKind::Nic), 6);
  EXPECT_EQ(count_kind(hgx, VertexKind::PcieSwitch), 6);
  const Topology alone = make_preset("dgx_a100:1,nics=0");
  EXPECT_EQ(count_kind(alone, VertexKind::Nic), 0);
  EXPECT_THROW(make_preset("dgx_a100:2,nics=0"), ConfigError);
  EXPECT_THROW(make_preset("dgx_a100:2,gpus=0"), ConfigError);
  EXPECT_THROW(make_preset("dgx1_v100:2,gpus=4"), ConfigError);  // the mesh has 8
}

// DGX-1 boards cabled with fewer NICs (servers of the same board): two, on the first PCIe switch of each
// socket, or one, which every GPU's traffic to the network then shares.
TEST(Presets, Dgx1WithFewerNics) {
  const Topology two = make_preset("dgx1_v100:2,nics=2");
  EXPECT_EQ(count_kind(two, VertexKind::Nic), 4);
  const auto& nics = two.nics_of_node(0);
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(two.vertex(nics[0]).name, "n0.nic0");
  EXPECT_EQ(two.vertex(nics[1]).name, "n0.nic2");
  const Topology one = make_preset("dgx1_p100:3,nics=1");
  EXPECT_EQ(count_kind(one, VertexKind::Nic), 3);
  for (int r = 0; r < 8; ++r) {
    const Route route = one.route_between_ranks(r, 8 + r);
    bool through_nic0 = false;
    for (const auto& h : route.hops)
      through_nic0 = through_nic0 || one.vertex(one.link(h.link).a).name == "n0.nic0" ||
                     one.vertex(one.link(h.link).b).name == "n0.nic0";
    EXPECT_TRUE(through_nic0) << "rank " << r;
  }
  EXPECT_EQ(count_kind(make_preset("dgx1_v100:1,nics=0"), VertexKind::Nic), 0);
  EXPECT_THROW(make_preset("dgx1_v100:2,nics=3"), ConfigError);
  EXPECT_THROW(make_preset("dgx1_v100:2,nics=0"), ConfigError);
}

TEST(Presets, H100AndPcieParameters) {
  const Topology h = make_preset("dgx_h100:1");
  EXPECT_DOUBLE_EQ(h.route_between_ranks(0, 1).bottleneck_bandwidth_Bps, 450e9 * 0.8);
  const Topology p = make_preset("pcie_server:3,gpus=2,nic=100Gbps");
  EXPECT_EQ(p.gpus().size(), 6u);
  EXPECT_DOUBLE_EQ(p.route_between_ranks(0, 5).bottleneck_bandwidth_Bps, 12.5e9 * 0.9);  // Ethernet
}

// The network's link kind: `net=` puts TCP sockets or EFA between the NICs and the switches, each with its
// own link model, and the per-message cost is paid at the two ends of a route, not between switches.
TEST(Presets, NetworkKindsAndWhereTheirMessageCostIsPaid) {
  for (const auto& [net, kind] : {std::pair{"tcp", LinkKind::Tcp}, std::pair{"efa", LinkKind::Efa},
                                  std::pair{"roce", LinkKind::Ethernet}}) {
    const Topology t =
        make_preset(fmt::format("pcie_server:8,gpus=1,nic=100Gbps,fabric=leaf_spine,leaf_size=2,"
                                "spines=1,net={}",
                                net));
    const Route r = t.route_between_ranks(0, 7);  // NIC, leaf, spine, leaf, NIC
    int network_hops = 0;
    for (const Hop& h : r.hops)
      network_hops += t.link(h.link).kind == kind;
    ASSERT_EQ(network_hops, 4) << net;
    const LinkModel m = Topology::default_link_model(kind);
    EXPECT_DOUBLE_EQ(r.bottleneck_bandwidth_Bps, 12.5e9 * m.efficiency) << net;
    // Two PCIe hops at each end, four network hops, and the message cost at the two NIC ends only.
    EXPECT_NEAR(r.latency_s, 4 * 400e-9 + 4 * 600e-9 + 2 * m.overhead_s, 1e-15) << net;
  }
  // EFA's per-end cost is AWS's network step (20 us on P5, aws-ofi-nccl's tuner) less a DGX-class route's
  // wires: GPU to GPU across two p5-like nodes, a step costs that figure.
  EXPECT_NEAR(make_preset("dgx_h100:2,net=efa").route_between_ranks(0, 8).latency_s, 20e-6, 0.05e-6);
  const LinkModel tcp = Topology::default_link_model(LinkKind::Tcp);
  const LinkModel ib = Topology::default_link_model(LinkKind::InfiniBand);
  const LinkModel roce = Topology::default_link_model(LinkKind::Ethernet);
  EXPECT_GT(tcp.overhead_s, 5 * ib.overhead_s);  // the kernel's stack against RDMA
  EXPECT_GT(tcp.overhead_s, roce.overhead_s);
  EXPECT_LT(tcp.efficiency, roce.efficiency);
  // NCCL's sockets move at the slowest flow's pace: TCP's framing and allowance (0.85) times the slowest of
  // eight kernel TCP flows against their mean over 100 Gb/s (7.63 of 86.62 / 8 Gb/s, NVIDIA/nccl#450).
  EXPECT_NEAR(tcp.efficiency, 0.85 * 7.63 / (86.62 / 8), 0.005);
  EXPECT_TRUE(is_network(LinkKind::Tcp) && is_network(LinkKind::Efa) && !is_network(LinkKind::Socket));
  EXPECT_THROW(make_preset("dgx_a100:2,net=nvlink"), ConfigError);
  EXPECT_THROW(make_preset("dgx_a100:2,net=socket"), ConfigError);
  EXPECT_EQ(parse_link_kind("upi"), LinkKind::Socket);
  EXPECT_EQ(parse_link_kind("xgmi"), LinkKind::Socket);
  EXPECT_EQ(parse_link_kind("efa"), LinkKind::Efa);
  EXPECT_EQ(parse_link_kind("sockets"), std::nullopt);
}

// DGX-1's two CPU sockets are joined by a socket link at the bandwidth NCCL gives peer traffic over QPI.
TEST(Presets, Dgx1SocketsAreJoinedByQpi) {
  const Topology t = make_preset("dgx1_v100:1");
  int sockets = 0;
  for (const Link& l : t.links()) {
    if (l.kind != LinkKind::Socket) continue;
    ++sockets;
    EXPECT_EQ(t.vertex(l.a).kind, VertexKind::Cpu);
    EXPECT_EQ(t.vertex(l.b).kind, VertexKind::Cpu);
    EXPECT_DOUBLE_EQ(t.effective_bandwidth_Bps(&l - t.links().data()), 6e9);
  }
  EXPECT_EQ(sockets, 1);
}

TEST(Topology, GpuNicIsOnTheSamePcieSwitch) {
  const Topology t = make_preset("dgx_a100:1");
  for (int g = 0; g < 8; ++g) {
    auto nic = t.gpu_nic(t.gpus()[g]);
    ASSERT_TRUE(nic);
    const std::string name = t.vertex(*nic).name;
    const int index = name.back() - '0';
    EXPECT_EQ(index / 2, g / 2) << name;  // NICs 2s, 2s+1 share PCIe switch s with GPUs 2s, 2s+1
  }
}

TEST(Topology, RoutesAreDeterministicAndEcmpSpreadsOverSpines) {
  const Topology t = make_preset("pcie_server:16,gpus=1,fabric=leaf_spine,leaf_size=2,spines=4");
  std::set<std::string> spines_used;
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      if (t.node_of_rank(a) / 2 == t.node_of_rank(b) / 2) continue;  // same leaf
      const Route r1 = t.route_between_ranks(a, b), r2 = t.route_between_ranks(a, b);
      ASSERT_EQ(r1.hops, r2.hops);
      for (const Hop& h : r1.hops) {
        const Link& l = t.link(h.link);
        const std::string name = t.vertex(h.forward ? l.b : l.a).name;
        if (name.starts_with("spine")) spines_used.insert(name);
      }
    }
  }
  EXPECT_EQ(spines_used.size(), 4u);
}

// route() searches from both ends; the reference searches from the target alone. Same least-cost next-hop
// sets in the same order mean the same routes: every pair of GPUs (and a GPU and a switch) on fabrics with
// ECMP over spines, rails, a big single switch, degraded links that move least-cost paths, and failed ones.
TEST(Routing, BidirectionalSearchTakesTheReferenceRoute) {
  // (Built in place and shared: copying a Boost adjacency_list trips a GCC false warning.)
  std::vector<std::shared_ptr<const Topology>> fabrics;
  for (const char* spec : {"pcie_server:16,gpus=2,fabric=leaf_spine,leaf_size=2,spines=4",
                           "pcie_server:12,gpus=1,fabric=leaf_spine,leaf_size=3,spines=3,oversub=2",
                           "dgx_h100:3,fabric=rail", "dgx1_v100:3,fabric=leaf_spine,leaf_size=1,spines=2",
                           "dgx_a100:12"})  // one switch of degree 96: walked from the other side
    fabrics.push_back(load_topology_shared(spec));
  const auto degraded = load_topology_mutable("pcie_server:8,gpus=2,fabric=leaf_spine,leaf_size=2,spines=3");
  const auto failed = load_topology_mutable("pcie_server:8,gpus=2,fabric=leaf_spine,leaf_size=2,spines=3");
  for (std::size_t l = 0; l < degraded->num_links(); l += 5)
    degraded->degrade_link(l, 0.25 + 0.05 * static_cast<double>(l % 7), 1e-6 * static_cast<double>(l % 3));
  for (std::size_t l = 0; l < failed->num_links(); ++l) {
    const Link& link = failed->link(l);
    if (failed->vertex(link.a).name == "spine1" || failed->vertex(link.b).name == "spine1")
      failed->fail_link(l);
  }
  fabrics.push_back(degraded);
  fabrics.push_back(failed);
  for (const auto& shared : fabrics) {
    const Topology& t = *shared;
    int compared = 0;
    std::vector<VertexId> ends = t.gpus();
    for (VertexId v = 0; v < t.num_vertices(); ++v)
      if (t.vertex(v).kind == VertexKind::Switch) ends.push_back(v);
    for (VertexId a : ends) {
      for (VertexId b : ends) {
        Route reference;
        try {
          reference = t.reference_route(a, b);
        } catch (const ConfigError&) {  // an isolated switch: both say so
          EXPECT_THROW(t.route(a, b), ConfigError);
          continue;
        }
        const Route fast = t.route(a, b);
        ASSERT_EQ(fast.hops, reference.hops)
            << t.name() << ": " << t.vertex(a).name << " -> " << t.vertex(b).name;
        EXPECT_EQ(fast.latency_s, reference.latency_s);
        ++compared;
      }
    }
    EXPECT_GT(compared, 100) << t.name();
  }
}

// The same on random switch graphs whose links cost one or two units (100 or 50 GB/s, no latency), so that
// least-cost paths tie often and branch and merge: wrong next-hop sets, orders or on-route decisions change
// routes here. A hub joined to 70 switches is walked from the other side.
TEST(Routing, BidirectionalSearchMatchesTheReferenceOnRandomGraphs) {
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    Topology t(fmt::format("random{}", seed));
    std::vector<VertexId> switches, gpus;
    for (int s = 0; s < 80; ++s)
      switches.push_back(t.add_vertex(Vertex{fmt::format("sw{}", s), VertexKind::Switch}));
    auto join = [&](VertexId a, VertexId b, LinkKind kind) {
      t.add_link(a, b, kind, std::uniform_int_distribution<int>(0, 1)(rng) ? 100e9 : 50e9, 0.0);
    };
    for (int s = 1; s < 80; ++s)  // a chain keeps it connected
      join(switches[s - 1], switches[s], LinkKind::InfiniBand);
    for (int extra = 0; extra < 120; ++extra) {
      const auto a = std::uniform_int_distribution<std::size_t>(1, 79)(rng);
      const auto b = std::uniform_int_distribution<std::size_t>(1, 79)(rng);
      if (a != b) join(switches[a], switches[b], LinkKind::InfiniBand);
    }
    for (int s = 1; s <= 70; ++s)
      join(switches[0], switches[s], LinkKind::InfiniBand);
    for (int g = 0; g < 16; ++g) {
      gpus.push_back(t.add_vertex(Vertex{fmt::format("n{}.gpu0", g), VertexKind::Gpu, g, 0}));
      for (int k = 0; k < 2; ++k)
        join(gpus.back(), switches[std::uniform_int_distribution<std::size_t>(1, 79)(rng)], LinkKind::Pcie);
    }
    for (VertexId a : gpus) {
      for (VertexId b : gpus) {
        ASSERT_EQ(t.route(a, b).hops, t.reference_route(a, b).hops)
            << t.name() << ": " << t.vertex(a).name << " -> " << t.vertex(b).name;
      }
      for (VertexId b : switches)
        ASSERT_EQ(t.route(a, b).hops, t.reference_route(a, b).hops) << t.name();
    }
  }
}

TEST(Topology, OversubscriptionSetsUplinkBandwidth) {
  const Topology t =
      make_preset("pcie_server:4,gpus=1,nic=100Gbps,fabric=leaf_spine,leaf_size=2,spines=1,oversub=4");
  // A leaf has 2 x 12.5 GB/s down; one spine up-link of 25/4 GB/s.
  const Route r = t.route_between_ranks(0, 3);
  EXPECT_DOUBLE_EQ(r.bottleneck_bandwidth_Bps, 25e9 / 4 * 0.9);
}

TEST(Topology, RailFabricKeepsSameRailTrafficOnItsRail) {
  const Topology t = make_preset("dgx_h100:2,fabric=rail");
  const Route r = t.route_between_ranks(2, 10);  // local rank 2 of both nodes
  for (const Hop& h : r.hops) {
    const Link& l = t.link(h.link);
    EXPECT_NE(t.vertex(l.a).name, "rail-spine");
    EXPECT_NE(t.vertex(l.b).name, "rail-spine");
  }
}

// A neighbour job: its servers' NICs in spare ports of the job's leaves (up-links unchanged), a ring of
// background flows rail by rail; the job's world, nodes and routes stay what they were.
TEST(Topology, NeighbourJobSharesTheLeavesAndRunsARing) {
  const char* base = "dgx_a100:4,fabric=leaf_spine,leaf_size=2,oversub=2";
  const Topology alone = make_preset(base);
  const Topology shared = make_preset(std::string(base) + ",neighbour=4");
  EXPECT_EQ(shared.gpus().size(), alone.gpus().size());
  EXPECT_EQ(shared.num_nodes(), alone.num_nodes());
  EXPECT_EQ(shared.route_between_ranks(0, 31).hops.size(), alone.route_between_ranks(0, 31).hops.size());
  EXPECT_EQ(shared.route_between_ranks(0, 31).latency_s, alone.route_between_ranks(0, 31).latency_s);
  EXPECT_TRUE(alone.background().empty());
  ASSERT_EQ(shared.background().size(), 4u * 8u);                      // 4 servers x 8 NICs, one stream each
  const Topology::BackgroundFlow& f = shared.background()[8 * 3 + 5];  // server 3, NIC 5 -> server 0
  EXPECT_EQ(shared.vertex(f.from).name, "nb3.nic5");
  EXPECT_EQ(shared.vertex(f.to).name, "nb0.nic5");
  // Neighbour 1 sits under leaf 1, neighbour 0 under leaf 0: 0 -> 1 crosses a spine on up-links as fast as
  // the job's own.
  const Route r = shared.route(f.to, shared.background()[5].to);  // nb0.nic5 -> nb1.nic5
  EXPECT_EQ(r.hops.size(), 4u);
  EXPECT_DOUBLE_EQ(r.bottleneck_bandwidth_Bps, alone.route_between_ranks(5, 21).bottleneck_bandwidth_Bps);
  EXPECT_THROW(make_preset(std::string(base) + ",neighbour=1"), ConfigError);
}

// ECMP with a seed: one seed always routes a pair the same way; other seeds spread a pair's path over the
// spines (where flows collide moves), seed 0 is the unseeded hash.
TEST(Topology, EcmpSeedRedrawsTheSpines) {
  auto spines_of_pairs = [](const Topology& t) {
    std::vector<std::string> spines;
    for (int a = 0; a < 8; ++a) {
      for (const Hop& h : t.route_between_ranks(a, 16 + a).hops) {
        const Link& l = t.link(h.link);
        for (std::size_t v : {l.a, l.b})
          if (t.vertex(v).name.starts_with("spine")) spines.push_back(t.vertex(v).name);
      }
    }
    return spines;
  };
  const char* base = "dgx_a100:4,fabric=leaf_spine,leaf_size=2,spines=4";
  const auto unseeded = spines_of_pairs(make_preset(base));
  EXPECT_EQ(spines_of_pairs(make_preset(std::string(base) + ",ecmp_seed=0")), unseeded);
  EXPECT_EQ(spines_of_pairs(make_preset(std::string(base) + ",ecmp_seed=7")),
            spines_of_pairs(make_preset(std::string(base) + ",ecmp_seed=7")));
  std::set<std::vector<std::string>> draws;
  for (int seed = 0; seed < 8; ++seed)
    draws.insert(spines_of_pairs(make_preset(fmt::format("{},ecmp_seed={}", base, seed))));
  EXPECT_GE(draws.size(), 4u);
  Topology yaml = parse_topology_yaml(dump_topology_yaml(make_preset(std::string(base) + ",ecmp_seed=7")));
  EXPECT_EQ(yaml.ecmp_seed(), 7u);
}

// The k-ary fat-tree: k/2 servers per edge switch, k/2 edges and k/2 aggregation switches per pod, (k/2)^2
// cores; a route climbs only as high as it must (same edge, same pod, across pods).
TEST(Topology, FatTreeHasPodsAndClimbsOnlyAsHighAsItMust) {
  const Topology t = make_preset("dgx_a100:16,fabric=fat_tree,k=4");
  int switches = 0;
  for (std::size_t v = 0; v < t.num_vertices(); ++v)
    switches += t.vertex(v).kind == VertexKind::Switch ? 1 : 0;
  EXPECT_EQ(switches, 4 + 4 * 2 + 8);  // cores, aggregation switches of 4 pods, 8 edges of 2 servers
  auto network_hops = [&](int a, int b) {
    int n = 0;
    for (const Hop& h : t.route_between_ranks(a, b).hops)
      n += t.link(h.link).kind == LinkKind::InfiniBand ? 1 : 0;
    return n;
  };
  EXPECT_EQ(network_hops(0, 8), 2);                                           // node 1: the same edge
  EXPECT_EQ(network_hops(0, 16), 4);                                          // node 2: another edge of pod 0
  EXPECT_EQ(network_hops(0, 32), 6);                                          // node 4: pod 1, through a core
  EXPECT_THROW(make_preset("dgx_a100:17,fabric=fat_tree,k=4"), ConfigError);  // holds 16 servers
  EXPECT_THROW(make_preset("dgx_a100:2,fabric=fat_tree,k=3"), ConfigError);
}

TEST(PresetSpec, Errors) {
  EXPECT_THROW(make_preset("dgx_z100:4"), ConfigError);
  EXPECT_THROW(make_preset("dgx_a100"), ConfigError);
  EXPECT_THROW(make_preset("dgx_a100:zero"), ConfigError);
  EXPECT_THROW(make_preset("dgx_a100:0"), ConfigError);
  EXPECT_THROW(make_preset("dgx_a100:2,colour=blue"), ConfigError);
  EXPECT_THROW(make_preset("pcie_server:2,nic=fast"), ConfigError);
  EXPECT_THROW(make_preset("pcie_server:2,fabric=torus"), ConfigError);
  EXPECT_THROW(make_preset("pcie_server:2,oversub=0.5"), ConfigError);
  try {
    make_preset("dgx_a100:2,colour=blue");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("colour"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("valid keys"), std::string::npos);
  }
}

TEST(PresetSpec, SizeLimits) {
  auto message = [](const char* spec) {
    try {
      make_preset(spec);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("dgx_a100:8193").find("more than the 65536 GPUs"), std::string::npos);
  EXPECT_NE(message("pcie_server:2000000000,gpus=2000000000").find("more than the 65536 GPUs"),
            std::string::npos);
  EXPECT_NE(message("pcie_server:2,fabric=leaf_spine,spines=100000").find("spines must be <= 1024"),
            std::string::npos);
}

// Found by the scenario fuzzer's seed corpus: the '/' of "GB/s" made a preset spec look like a file path.
TEST(PresetSpec, BandwidthWithSlashIsStillAPreset) {
  const Topology t = load_topology("dgx_a100:1,nvlink=150GB/s");
  EXPECT_EQ(t.gpus().size(), 8u);
  EXPECT_THROW(load_topology("./dgx_a100:1,nvlink=150GB/s"), ConfigError);  // an explicit path stays a path
}

TEST(Yaml, RoundTrip) {
  for (const char* spec :
       {"dgx_a100:2", "dgx_h100:3,fabric=rail", "pcie_server:5,gpus=3,fabric=leaf_spine,oversub=3",
        "dgx_a100:2,fabric=leaf_spine,leaf_size=1,neighbour=3", "dgx1_p100:2,net=tcp", "dgx_a100:2,net=efa",
        "dgx_a100:2,fabric=leaf_spine,leaf_size=1,sharp=1"}) {
    const Topology t = make_preset(spec);
    const std::string text = dump_topology_yaml(t);
    const Topology back = parse_topology_yaml(text);
    EXPECT_TRUE(back == t) << spec;
    EXPECT_EQ(dump_topology_yaml(back), text);
    // Values in the unit that says them shortest, not binary noise such as "499.99999999999994ns".
    EXPECT_EQ(text.find("9999"), std::string::npos) << text;
  }
  const std::string a100 = dump_topology_yaml(make_preset("dgx_a100:1"));
  EXPECT_NE(a100.find("gpu_arch: ampere"), std::string::npos) << a100;
  EXPECT_EQ(parse_topology_yaml(a100).gpu_arch(), GpuArch::Ampere);
  EXPECT_EQ(make_preset("pcie_server:1").gpu_arch(), std::nullopt);  // a generic GPU: no NCCL ceilings
  EXPECT_NE(a100.find("host_cpu: amd"), std::string::npos) << a100;
  EXPECT_EQ(parse_topology_yaml(a100).host_cpu(), HostCpu::Amd);
  EXPECT_EQ(make_preset("dgx_h100:1").host_cpu(), HostCpu::Intel);
  EXPECT_EQ(make_preset("gb200_nvl72:1").host_cpu(), HostCpu::Arm);
  EXPECT_EQ(make_preset("pcie_server:1").host_cpu(), std::nullopt);
  EXPECT_NE(a100.find("bandwidth: 300GB/s, latency: 0.3us"), std::string::npos) << a100;
  EXPECT_NE(a100.find("bandwidth: 31.507692307692306GB/s"), std::string::npos) << a100;
}

TEST(Dot, HasEveryVertexAndOneEdgePerLink) {
  const Topology t = make_preset("pcie_server:2,gpus=2");
  std::ostringstream out;
  t.write_dot(out);
  const std::string dot = out.str();
  for (VertexId v = 0; v < t.num_vertices(); ++v)
    EXPECT_NE(dot.find(t.vertex(v).name), std::string::npos);
  std::size_t edges = 0;
  for (std::size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 1))
    ++edges;
  EXPECT_EQ(edges, t.num_links());
}

// ---- one test per invalid field: the error names the line and the field ----

const char* kValid = R"(name: tiny
vertices:
  - {name: g0, kind: gpu, node: 0, local_rank: 0}
  - {name: g1, kind: gpu, node: 0, local_rank: 1}
  - {name: sw, kind: nvswitch, node: 0}
links:
  - {from: g0, to: sw, kind: nvswitch, bandwidth: 300GB/s, latency: 500ns}
  - {from: g1, to: sw, kind: nvswitch, bandwidth: 300GB/s, latency: 500ns}
)";

void expect_error(const std::string& text, const std::string& line_and_field) {
  try {
    parse_topology_yaml(text, "t.yaml");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(line_and_field), std::string::npos) << e.what();
  }
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(YamlErrors, ValidFileLoads) {
  EXPECT_EQ(parse_topology_yaml(kValid).gpus().size(), 2u);
}
TEST(YamlErrors, GpuArch) {
  EXPECT_EQ(parse_topology_yaml(replace(kValid, "name: tiny", "name: tiny\ngpu_arch: hopper")).gpu_arch(),
            GpuArch::Hopper);
  expect_error(replace(kValid, "name: tiny", "name: tiny\ngpu_arch: kepler"), "t.yaml:2: gpu_arch");
}
TEST(YamlErrors, HostCpu) {
  EXPECT_EQ(parse_topology_yaml(replace(kValid, "name: tiny", "name: tiny\nhost_cpu: amd")).host_cpu(),
            HostCpu::Amd);
  EXPECT_EQ(parse_topology_yaml(kValid).host_cpu(), std::nullopt);
  expect_error(replace(kValid, "name: tiny", "name: tiny\nhost_cpu: sparc"), "t.yaml:2: host_cpu");
}
TEST(YamlErrors, VertexKind) {
  expect_error(replace(kValid, "kind: nvswitch, node", "kind: hub, node"), "t.yaml:5: vertices[2].kind");
}
TEST(YamlErrors, VertexNode) {
  expect_error(replace(kValid, "node: 0, local_rank: 1", "node: x, local_rank: 1"),
               "t.yaml:4: vertices[1].node");
}
TEST(YamlErrors, VertexLocalRank) {
  expect_error(replace(kValid, "local_rank: 1", "local_rank: -1"), "t.yaml:4: vertices[1].local_rank");
}
TEST(YamlErrors, VertexName) {
  expect_error(replace(kValid, "{name: g1,", "{name: g0,"), "vertices[1].name");
  expect_error(replace(kValid, "{name: g1,", "{name: \"g\\x1c1\","),
               "vertices[1].name");  // fuzzer: no round trip
}
TEST(YamlErrors, GpuWithoutNode) {
  expect_error(replace(kValid, "{name: g1, kind: gpu, node: 0, local_rank: 1}", "{name: g1, kind: gpu}"),
               "t.yaml:4: vertices[1]");
}
// Only a network switch reduces in the network; the flag is true or false.
TEST(YamlErrors, Sharp) {
  expect_error(replace(kValid, "kind: nvswitch, node: 0}", "kind: nvswitch, node: 0, sharp: true}"),
               "t.yaml:5: vertices[2]");
  expect_error(replace(kValid, "kind: nvswitch, node: 0}", "kind: nvswitch, node: 0, sharp: maybe}"),
               "t.yaml:5: vertices[2].sharp");
}
TEST(Yaml, SharpMarksTheFabricSwitches) {
  const Topology t = make_preset("dgx_a100:2,fabric=leaf_spine,leaf_size=1,sharp=1");
  int sharp = 0;
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    EXPECT_EQ(t.vertex(v).sharp, t.vertex(v).kind == VertexKind::Switch) << t.vertex(v).name;
    sharp += t.vertex(v).sharp ? 1 : 0;
  }
  EXPECT_EQ(sharp, 4);  // two leaves, two spines
  EXPECT_NE(dump_topology_yaml(t).find("kind: switch, sharp: true"), std::string::npos);
  // A GPU's SHARP port is its NIC's link to its leaf.
  const auto port = sharp_port(t, t.gpus()[9]);
  ASSERT_TRUE(port);
  EXPECT_EQ(t.vertex(port->sw).name, "leaf1");
  EXPECT_EQ(t.vertex(t.link(port->link).a).kind, VertexKind::Nic);
}
TEST(YamlErrors, UnknownVertexField) {
  expect_error(replace(kValid, "local_rank: 1}", "local_rank: 1, colour: red}"), "vertices[1].colour");
}
TEST(YamlErrors, LinkFrom) {
  expect_error(replace(kValid, "{from: g0", "{from: g9"), "t.yaml:7: links[0].from");
}
TEST(YamlErrors, LinkTo) {
  expect_error(replace(kValid, "{from: g1, to: sw", "{from: g1, to: s2"), "t.yaml:8: links[1].to");
}
TEST(YamlErrors, LinkKind) {
  expect_error(replace(kValid, "{from: g0, to: sw, kind: nvswitch", "{from: g0, to: sw, kind: wifi"),
               "t.yaml:7: links[0].kind");
}
TEST(YamlErrors, LinkBandwidth) {
  expect_error(
      replace(kValid, "300GB/s, latency: 500ns}\n  - {from: g1", "300GB/h, latency: 500ns}\n  - {from: g1"),
      "t.yaml:7: links[0].bandwidth");
}
TEST(YamlErrors, LinkLatency) {
  expect_error(replace(kValid, "latency: 500ns}\n  - {from: g1", "latency: soon}\n  - {from: g1"),
               "t.yaml:7: links[0].latency");
}
// Found by fuzz/topology_yaml_fuzz: a latency of 6e7 s overflowed the integer route cost into a negative edge
// weight, and Boost's Dijkstra threw an exception that was not a cclab error.
TEST(YamlErrors, LinkLatencyOutOfRange) {
  expect_error(
      replace(kValid, "latency: 500ns}\n  - {from: g1", "latency: 59949999999999999ns}\n  - {from: g1"),
      "t.yaml:7: links[0]");
}
TEST(YamlErrors, LinkBandwidthOutOfRange) {
  expect_error(
      replace(kValid, "300GB/s, latency: 500ns}\n  - {from: g1", "1B/s, latency: 500ns}\n  - {from: g1"),
      "t.yaml:7: links[0]");
}
TEST(YamlErrors, LinkMissingBandwidth) {
  expect_error(replace(kValid, " bandwidth: 300GB/s, latency: 500ns}\n  - {from: g1",
                       " latency: 500ns}\n  - {from: g1"),
               "t.yaml:7: links[0].bandwidth");
}
TEST(YamlErrors, SelfLink) {
  expect_error(replace(kValid, "{from: g0, to: sw", "{from: g0, to: g0"), "t.yaml:7: links[0]");
}
TEST(YamlErrors, TopLevelField) {
  expect_error(std::string(kValid) + "colour: blue\n", "topology.colour");
}
TEST(YamlErrors, LinkModelEfficiency) {
  expect_error(std::string(kValid) + "link_models:\n  pcie: {efficiency: 1.5}\n",
               "t.yaml:10: link_models.pcie.efficiency");
}
TEST(YamlErrors, LinkModelKind) {
  expect_error(std::string(kValid) + "link_models:\n  wifi: {efficiency: 0.5}\n",
               "t.yaml:10: link_models.wifi");
}
TEST(YamlErrors, LinkModelOverhead) {
  expect_error(std::string(kValid) + "link_models:\n  pcie: {overhead: fast}\n",
               "t.yaml:10: link_models.pcie.overhead");
}
TEST(Yaml, EveryLinkKindHasAModelInTheDump) {
  const std::string text = dump_topology_yaml(make_preset("dgx_a100:1"));
  for (LinkKind kind : kAllLinkKinds)
    EXPECT_NE(text.find(fmt::format("  {}: {{efficiency:", to_string(kind))), std::string::npos) << text;
  const Topology t =
      parse_topology_yaml(std::string(kValid) + "link_models:\n  tcp: {efficiency: 0.5, overhead: 20us}\n");
  EXPECT_DOUBLE_EQ(t.link_model(LinkKind::Tcp).overhead_s, 20e-6);
}

TEST(Yaml, LinkModelsOverrideDefaults) {
  const Topology t = parse_topology_yaml(std::string(kValid) +
                                         "link_models:\n  nvswitch: {efficiency: 0.5, overhead: 2us}\n");
  EXPECT_DOUBLE_EQ(t.route_between_ranks(0, 1).bottleneck_bandwidth_Bps, 150e9);
  EXPECT_DOUBLE_EQ(t.route_between_ranks(0, 1).latency_s, 2 * (500e-9 + 2e-6));
}
TEST(YamlErrors, NotYaml) {
  expect_error("vertices: [\n", "t.yaml");
}
TEST(YamlErrors, NoGpu) {
  expect_error("vertices:\n  - {name: s, kind: switch}\nlinks: []\n", "t.yaml:2: vertices");
}
TEST(YamlErrors, Disconnected) {
  const Topology t = parse_topology_yaml(
      replace(kValid, "  - {from: g1, to: sw, kind: nvswitch, bandwidth: 300GB/s, latency: 500ns}\n", ""));
  EXPECT_THROW(t.route_between_ranks(0, 1), ConfigError);
}

}  // namespace
}  // namespace cclab::topo
