// Rings from the topology (engine/plan/ring_search.hpp): on a DGX-1 mesh the channels use every NVLink, each
// no more often than it has links; across nodes every channel enters and leaves a node through the NIC it is
// given, and the NICs carry equal shares; NVSwitch nodes keep their rotated rings; the default channel count
// says why it is what it is.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "engine/model/compact_cost.hpp"
#include "engine/plan/registry.hpp"
#include "engine/plan/ring_search.hpp"
#include "topology/presets.hpp"
#include "topology/yaml_io.hpp"

namespace cclab::planners {
namespace {

using topo::LinkKind;
using topo::Topology;
using topo::VertexId;

// NVLinks per direct GPU pair of node 0, in units of the slowest (DGX-1V: 1 or 2).
std::map<std::pair<int, int>, int> nvlink_units(const Topology& t) {
  std::map<std::pair<int, int>, int> units;
  double unit = 1e30;
  for (const auto& l : t.links())
    if (l.kind == LinkKind::NvLink) unit = std::min(unit, l.bandwidth_Bps);
  for (const auto& l : t.links()) {
    if (l.kind != LinkKind::NvLink || t.vertex(l.a).node != 0) continue;
    const int a = t.vertex(l.a).local_rank, b = t.vertex(l.b).local_rank;
    units[{a, b}] = units[{b, a}] = static_cast<int>(l.bandwidth_Bps / unit + 0.5);
  }
  return units;
}

TEST(RingSearch, Dgx1ChannelsFillEveryNvLinkOnce) {
  for (const auto& [spec, channels] : {std::pair{"dgx1_v100:1", 6}, std::pair{"dgx1_p100:1", 4}}) {
    const Topology t = topo::make_preset(spec);
    std::string why;
    ASSERT_EQ(default_ring_channels(t, &why), channels) << spec;
    EXPECT_NE(why.find("NVLink mesh"), std::string::npos) << why;
    const auto units = nvlink_units(t);
    std::map<std::pair<int, int>, int> used;
    const RingSearch rings = search_rings(t, channels);
    ASSERT_EQ(rings.rings.size(), static_cast<std::size_t>(channels));
    for (const auto& ring : rings.rings) {
      ASSERT_EQ(std::set<int>(ring.begin(), ring.end()).size(), 8u) << spec;
      for (std::size_t i = 0; i < ring.size(); ++i) {
        const std::pair hop{ring[i], ring[(i + 1) % ring.size()]};
        ASSERT_TRUE(units.count(hop)) << spec << ": " << hop.first << "->" << hop.second << " has no NVLink";
        ++used[hop];
      }
    }
    // Every direction of every link carries as many channels as it has links: all of them, none twice.
    for (const auto& [hop, n] : units)
      EXPECT_EQ(used[hop], n) << spec << ": " << hop.first << "->" << hop.second;
  }
}

// A ring that crossed the mesh through PCIe (the rank-order rotation: 3 -> 4 has no NVLink) was ten times
// slower; the searched rings reach the links' aggregate.
TEST(RingSearch, Dgx1AllreduceUsesTheLinksAggregate) {
  const Topology t = topo::make_preset("dgx1_v100:1");
  const Algorithm& ring = require_algorithm(Collective::AllReduce, "ring");
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 1ULL << 28, DType::F32, ReduceOp::Sum, 0);
  const double time_s = estimate_compact_cost(ring.compact(spec, t, PlanOptions{}), t).total_s;
  const double busbw_Bps = spec.bytes() / time_s * 2 * 7 / 8;
  // 6 channels x 25 GB/s x NVLink efficiency 0.8 = 120 GB/s is the bound; pipelining gets close.
  EXPECT_GT(busbw_Bps, 0.95 * 120e9);
  EXPECT_LT(busbw_Bps, 120e9);
}

// The tree's chains inside DGX-1 nodes follow NVLinks too (nvlink_chain_orders, a packed cycle per channel
// pair): in local-rank order they crossed the CPU from GPU 3 to 4 and from 7 back to 0, and took 34.1 ms for
// 256 MiB on two nodes where they now take 13.1 (busbw 14.8 -> 38.5 GB/s). Every parent inside a node is a
// direct NVLink neighbour, on every channel, and the pairs' chains use more than one cycle's links.
TEST(RingSearch, Dgx1TreeChainsFollowNvLinks) {
  for (const char* spec : {"dgx1_v100:2", "dgx1_p100:3", "dgx1_v100:1"}) {
    const Topology t = topo::make_preset(spec);
    const auto units = nvlink_units(t);
    const CollectiveSpec c = spec_for(t, Collective::AllReduce, 1 << 20, DType::F32, ReduceOp::Sum, 0);
    const CompactSchedule s = require_algorithm(Collective::AllReduce, "tree").compact(c, t, PlanOptions{});
    const auto& pass = std::get<TreePass>(*s.phases()[0].lanes[0].pass);
    const auto& ranks = s.phases()[0].lanes[0].ranks;
    for (int ch = 0; ch < pass.channels(); ++ch) {
      const Tree& tree = pass.trees[ch];
      for (int m = 0; m < pass.members(); ++m) {
        const int parent = tree.parent[m];
        if (parent < 0) continue;
        const VertexId a = t.gpus()[ranks[m]], b = t.gpus()[ranks[parent]];
        if (t.vertex(a).node != t.vertex(b).node || t.vertex(a).node != 0) continue;
        EXPECT_TRUE(units.count({t.vertex(a).local_rank, t.vertex(b).local_rank}))
            << spec << " channel " << ch << ": " << ranks[m] << " -> parent " << ranks[parent]
            << " has no NVLink";
      }
    }
  }
  {  // the channel pairs spread over the mesh: more distinct GPU pairs carry chains than one cycle has (8)
    const Topology t = topo::make_preset("dgx1_v100:2");
    const CollectiveSpec c = spec_for(t, Collective::AllReduce, 1 << 20, DType::F32, ReduceOp::Sum, 0);
    const CompactSchedule s = require_algorithm(Collective::AllReduce, "tree").compact(c, t, PlanOptions{});
    const auto& pass = std::get<TreePass>(*s.phases()[0].lanes[0].pass);
    std::set<std::pair<int, int>> links;
    for (const Tree& tree : pass.trees)
      for (int m = 0; m < 8; ++m)
        if (const int p = tree.parent[m]; p >= 0 && p < 8) links.insert({std::min(m, p), std::max(m, p)});
    EXPECT_GT(links.size(), 8u);
  }
  // Switched nodes keep the local-rank order.
  const Topology h100 = topo::make_preset("dgx_h100:1");
  const std::vector<int> node{0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(nvlink_chain_orders(h100, node), std::vector<std::vector<int>>{node});
  EXPECT_EQ(nvlink_chain_orders(topo::make_preset("dgx1_v100:1"), node).size(), 3u);  // the packed cycles
}

// Across nodes, channel c enters and leaves every node through NIC c mod N (two GPUs of that NIC) on DGX-1,
// and on an NVSwitch node with two NICs (four GPUs each) through GPUs of its NIC.
TEST(RingSearch, ChannelsEnterAndLeaveThroughTheirNic) {
  for (const char* spec : {"dgx1_v100:3", "dgx1_p100:2", "dgx_h100:3,nics=2"}) {
    const Topology t = topo::make_preset(spec);
    const int channels = default_ring_channels(t);
    const int nics = static_cast<int>(t.nics_of_node(0).size());
    ASSERT_EQ(channels % nics, 0) << spec;
    const RingSearch rings = search_rings(t, channels);
    std::map<VertexId, int> entering, leaving;
    for (int c = 0; c < channels; ++c) {
      const auto& ring = rings.rings[c];
      const VertexId nic = t.nics_of_node(0)[c % nics];
      for (std::size_t i = 0; i < ring.size(); ++i) {
        const int from = ring[i], to = ring[(i + 1) % ring.size()];
        if (t.node_of_rank(from) == t.node_of_rank(to)) continue;
        const auto out = t.gpu_nic(t.gpus()[from]), in = t.gpu_nic(t.gpus()[to]);
        ++leaving[*out];
        ++entering[*in];
        if (t.node_of_rank(from) == 0) {
          EXPECT_EQ(*out, nic) << spec << " channel " << c;
        }
        if (t.node_of_rank(to) == 0) {
          EXPECT_EQ(*in, nic) << spec << " channel " << c;
        }
      }
    }
    for (VertexId nic : t.nics_of_node(1)) {
      EXPECT_EQ(leaving[nic], channels / nics) << spec << " " << t.vertex(nic).name;
      EXPECT_EQ(entering[nic], channels / nics) << spec << " " << t.vertex(nic).name;
    }
  }
}

// Fewer NICs than PCIe switches (a DGX A100 with two of its HDR ports cabled: NICs under switches 0 and 2):
// channels enter and leave only through the GPUs beside their NIC, never through one that reaches it across
// the CPU, and the ring then carries what the two NICs can (it was held 20 % below, its detours sharing the
// CPU's PCIe links).
TEST(RingSearch, ChannelsUseTheGpusBesideTheirNic) {
  const Topology t = topo::make_preset("dgx_a100:2,nics=2");
  const int channels = default_ring_channels(t);
  const RingSearch rings = search_rings(t, channels);
  for (int c = 0; c < channels; ++c) {
    const auto& ring = rings.rings[c];
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const int from = ring[i], to = ring[(i + 1) % ring.size()];
      if (t.node_of_rank(from) == t.node_of_rank(to)) continue;
      for (const int gpu : {from, to}) {
        const VertexId v = t.gpus()[gpu];
        EXPECT_EQ(t.route(v, *t.gpu_nic(v)).hops.size(), 2u) << "channel " << c << " GPU " << gpu;
      }
    }
  }
  const Algorithm& ring = require_algorithm(Collective::AllReduce, "ring");
  const CollectiveSpec spec = spec_for(t, Collective::AllReduce, 1ULL << 28, DType::F32, ReduceOp::Sum, 0);
  const double time_s = estimate_compact_cost(ring.compact(spec, t, PlanOptions{}), t).total_s;
  const double busbw_Bps = spec.bytes() / time_s * 2 * 15 / 16;
  const double nics_Bps =
      2 * t.effective_bandwidth_Bps(t.route(t.nics_of_node(0)[0], t.nics_of_node(1)[0]).hops[0].link);
  EXPECT_GT(busbw_Bps, 0.97 * nics_Bps);
  EXPECT_LE(busbw_Bps, nics_Bps);
}

// NVSwitch nodes with a NIC per GPU keep the rail-aligned rotation; the counts and reasons.
TEST(RingSearch, SwitchedNodesAndDefaults) {
  const Topology dgx = topo::make_preset("dgx_a100:2");
  const RingSearch rings = search_rings(dgx, 8);
  for (int c = 0; c < 8; ++c)
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(rings.rings[c][i], (i / 8) * 8 + (i % 8 + c) % 8);
  std::string why;
  EXPECT_EQ(default_ring_channels(topo::make_preset("dgx_h100:2,nics=4"), &why), 8);
  EXPECT_NE(why.find("one per GPU of an NVSwitch node"), std::string::npos) << why;
  EXPECT_EQ(default_ring_channels(topo::make_preset("pcie_server:2,gpus=4"), &why), 1);
  EXPECT_NE(why.find("one per NIC"), std::string::npos) << why;
  EXPECT_EQ(default_ring_channels(topo::make_preset("gb200_nvl72:1"), &why), 72);
}

// A channel is one thread block, at most NCCL's per-channel speed (40 GB/s on Ampere): two A100s on a bridge
// of 12 NVLinks (240 GB/s of payload a direction) need six to fill it, as NCCL's search opens them, where the
// old rules (NICs, NVSwitch GPUs, mesh cycles) gave one and predicted a sixth of the bandwidth. Without an
// architecture there is no per-channel limit to fill, and one channel says why.
TEST(RingSearch, ChannelsFillTheNvLinkOfABridgedPair) {
  std::ifstream file(std::string(CCLAB_SOURCE_DIR) + "/topologies/a100_nvlink_pair.yaml");
  ASSERT_TRUE(file) << "topologies/a100_nvlink_pair.yaml";
  const std::string pair((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const Topology bridged = topo::parse_topology_yaml(pair);
  std::string why;
  EXPECT_EQ(nvlink_fill_channels(bridged), 6);
  EXPECT_EQ(default_ring_channels(bridged, &why), 6);
  EXPECT_NE(why.find("one thread block each"), std::string::npos) << why;
  const CollectiveSpec spec =
      spec_for(bridged, Collective::AllReduce, 1ULL << 28, DType::F32, ReduceOp::Sum, 0);
  const double ring_s =
      estimate_compact_cost(
          require_algorithm(Collective::AllReduce, "ring").compact(spec, bridged, PlanOptions{}), bridged)
          .total_s;
  const double busbw_Bps = static_cast<double>(spec.bytes()) / ring_s;  // 2 ranks: busbw = algbw
  EXPECT_GT(busbw_Bps, 0.95 * 240e9);
  EXPECT_LT(busbw_Bps, 240e9);
  // Trees on one node take the same floor, a pair of trees per two channels.
  EXPECT_EQ(
      require_algorithm(Collective::AllReduce, "tree").compact(spec, bridged, PlanOptions{}).params.channels,
      6);

  std::string unknown = pair;
  unknown.erase(unknown.find("gpu_arch: ampere\n"), std::string("gpu_arch: ampere\n").size());
  const Topology generic = topo::parse_topology_yaml(unknown);
  EXPECT_EQ(nvlink_fill_channels(generic), 0);
  EXPECT_EQ(default_ring_channels(generic, &why), 1);
  EXPECT_NE(why.find("direct GPU links that hold no ring"), std::string::npos) << why;
  // Across nodes the presets already had enough: their counts stay.
  EXPECT_EQ(nvlink_fill_channels(topo::make_preset("dgx_a100:1")), 6);
  EXPECT_EQ(default_ring_channels(topo::make_preset("dgx_a100:2")), 8);
  // An NVSwitch board without NICs had a channel per GPU: 2 on two H100s, 120 of their 360 GB/s. On one node
  // it now has NCCL's (NcclChannelsOnOneNvSwitchNode); across nodes, enough to fill the NVLink.
  EXPECT_EQ(default_ring_channels(topo::make_preset("dgx_h100:2,gpus=2,nics=1")), 6);
  EXPECT_EQ(default_ring_channels(topo::make_preset("gb200_nvl72:3,gpus=4,nics=4"), &why), 8);
  EXPECT_NE(why.find("720 GB/s"), std::string::npos) << why;
}

// On one NVSwitch node the channels are NCCL's: its search's channel count and speed (the most of a GPU's
// NVLink payload rate, the highest speed on ties), doubled by ncclTopoDupChannels where it applies and again
// by ncclTopoPostset. NCCL itself reported 24 on 8 H100s (2.19.3) and on 4 (2.29.2).
TEST(RingSearch, NcclChannelsOnOneNvSwitchNode) {
  struct Case {
    const char* spec;
    int channels;
    const char* search;  // the search's channels and speed, as the reason gives them
  };
  for (const Case& c : {Case{"dgx_h100:1", 24, "6 channels at 60 GB/s on a GPU's 360 GB/s"},
                        Case{"dgx_h100:1,gpus=4", 24, "6 channels at 60 GB/s"},
                        Case{"dgx_h100:1,nics=0", 24, "6 channels at 60 GB/s"},
                        Case{"dgx_a100:1", 24, "6 channels at 40 GB/s on a GPU's 240 GB/s"},
                        Case{"dgx_b200:1", 32, "8 channels at 90 GB/s on a GPU's 720 GB/s"},
                        // An H800's 8 NVLinks (160 GB/s of payload): 4 at 40 fill the most of it (60 GB/s
                        // fits two, 50 three, 30 five); with 4 channels, not more, Hopper doubles them too.
                        Case{"dgx_h100:1,nvlink=200GB/s", 16, "4 channels at 40 GB/s on a GPU's 160 GB/s"}}) {
    std::string why;
    EXPECT_EQ(default_ring_channels(topo::make_preset(c.spec), &why), c.channels) << c.spec;
    EXPECT_NE(why.find(c.search), std::string::npos) << c.spec << ": " << why;
    EXPECT_NE(why.find("NCCL's on one NVSwitch node"), std::string::npos) << c.spec << ": " << why;
  }
  // A count larger than NCCL's stays: a rack of 72 keeps its channel per GPU (NCCL's rule would give 32).
  EXPECT_EQ(default_ring_channels(topo::make_preset("gb200_nvl72:1")), 72);
  // Two nodes: one per NIC, as before.
  EXPECT_EQ(default_ring_channels(topo::make_preset("dgx_h100:2")), 8);
}

// NCCL's graphs for its tuning model (nccl_search), by hand from src/graph/search.cc: channels and
// per-channel speeds inside (bwIntra) and across (bwInter) nodes.
TEST(RingSearch, NcclGraphsAsItsSearchLeavesThem) {
  struct Expected {
    int channels;
    double intra, inter;
  };
  auto expect = [](const NcclGraph& g, Expected e, const std::string& what) {
    EXPECT_EQ(g.channels, e.channels) << what;
    EXPECT_DOUBLE_EQ(g.bw_intra_GBps, e.intra) << what;
    EXPECT_DOUBLE_EQ(g.bw_inter_GBps, e.inter) << what;
  };
  {
    // 8 x H100: the ring search's 6 channels at 60 GB/s, doubled (60 >= 50) to 12 at 30; the tree is held to
    // the ring's channels and finds the same speed; NVLS a head per GPU, (8 + 1) x 40 on a GPU's 360 GB/s,
    // bwInter raised to 60 (the top of the speeds, under twice 40).
    const NcclSearch s = nccl_search(topo::make_preset("dgx_h100:1"));
    ASSERT_TRUE(s.comm) << s.why_not;
    EXPECT_EQ(s.comm->nodes, 1);
    EXPECT_EQ(s.comm->ranks, 8);
    EXPECT_TRUE(s.comm->nvlink);
    expect(s.comm->graph(NcclAlgo::Ring), {12, 30, 30}, "h100 ring");
    expect(s.comm->graph(NcclAlgo::Tree), {12, 30, 30}, "h100 tree");
    expect(s.comm->graph(NcclAlgo::Nvls), {8, 40, 60}, "h100 nvls");
  }
  {
    // 8 x A100: 6 at 40 doubled to 12 at 20; no NVLS before Hopper.
    const NcclSearch s = nccl_search(topo::make_preset("dgx_a100:1"));
    ASSERT_TRUE(s.comm) << s.why_not;
    expect(s.comm->graph(NcclAlgo::Ring), {12, 20, 20}, "a100 ring");
    EXPECT_EQ(s.comm->graph(NcclAlgo::Nvls).channels, 0);
  }
  {
    // Two DGX H100: a channel per 400 Gb/s NIC at 48 GB/s (the PCIe Gen5 path, 48 as NCCL counts it, under
    // the port's 50), not doubled (Hopper, under 50 GB/s, more than 4 channels); NVLS heads at 40 (9 x 40 <=
    // 360), bwInter raised to what the NIC carries, 48.
    const NcclSearch s = nccl_search(topo::make_preset("dgx_h100:2"));
    ASSERT_TRUE(s.comm) << s.why_not;
    EXPECT_EQ(s.comm->nodes, 2);
    expect(s.comm->graph(NcclAlgo::Ring), {8, 48, 48}, "2 x h100 ring");
    expect(s.comm->graph(NcclAlgo::Tree), {8, 48, 48}, "2 x h100 tree");
    expect(s.comm->graph(NcclAlgo::Nvls), {8, 40, 48}, "2 x h100 nvls");
    expect(s.comm->graph(NcclAlgo::NvlsTree), {8, 40, 48}, "2 x h100 nvls tree");
  }
  {
    // Two DGX A100 with 8 HDR NICs: 24 GB/s a channel (PCIe Gen4, 24 as NCCL counts it); the tree's bwIntra
    // rises to 30 (28 and 30 fit 8 channels on 240 GB/s of NVLink at 7/8 of them each, 48 does not).
    const NcclSearch s = nccl_search(topo::make_preset("dgx_a100:2"));
    ASSERT_TRUE(s.comm) << s.why_not;
    expect(s.comm->graph(NcclAlgo::Ring), {8, 24, 24}, "2 x a100 ring");
    expect(s.comm->graph(NcclAlgo::Tree), {8, 30, 24}, "2 x a100 tree");
    // With 4 NICs: 4 channels, and the tree's bwIntra reaches twice bwInter.
    const NcclSearch four = nccl_search(topo::make_preset("dgx_a100:2,nics=4"));
    ASSERT_TRUE(four.comm) << four.why_not;
    expect(four.comm->graph(NcclAlgo::Ring), {4, 24, 24}, "2 x a100, 4 nics, ring");
    expect(four.comm->graph(NcclAlgo::Tree), {4, 48, 24}, "2 x a100, 4 nics, tree");
  }
  {
    // Two H800 nodes (8 NVLinks, 160 GB/s of payload a GPU): NVLink, not the NICs, holds the channels' speed,
    // 22 GB/s (8 x 22 x 7/8 <= 160; 24 is over), for the ring and the tree alike. NCCL's own table on such
    // nodes (NVIDIA/nccl#1154) gives the tree 68.8 GB/s of algbw: 8 x 22 x 0.92 / 2 x 0.85, the last factor
    // being the simpler tree pattern Hopper falls back to, which cclab does not model.
    const NcclSearch s = nccl_search(topo::make_preset("dgx_h100:2,nvlink=200GB/s"));
    ASSERT_TRUE(s.comm) << s.why_not;
    expect(s.comm->graph(NcclAlgo::Ring), {8, 22, 22}, "2 x h800 ring");
    expect(s.comm->graph(NcclAlgo::Tree), {8, 22, 22}, "2 x h800 tree");
  }
  // Where cclab does not reproduce NCCL's search it says why.
  Topology pcie_server = topo::make_preset("pcie_server:1");
  const NcclSearch unknown = nccl_search(pcie_server);
  EXPECT_FALSE(unknown.comm);
  EXPECT_NE(unknown.why_not.find("gpu_arch"), std::string::npos) << unknown.why_not;
  pcie_server.set_gpu_arch(topo::GpuArch::Ampere);
  const NcclSearch pcie = nccl_search(pcie_server);
  EXPECT_FALSE(pcie.comm);
  EXPECT_NE(pcie.why_not.find("PCIe"), std::string::npos) << pcie.why_not;
}

}  // namespace
}  // namespace cclab::planners
