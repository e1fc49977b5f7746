#include "engine/plan/ring_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "common/units.hpp"
#include "engine/model/protocol.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {
namespace {

using topo::Topology;
using topo::VertexId;
using topo::VertexKind;

// Meshes up to this many GPUs are searched path by path (8 GPUs: at most 5,040 paths per channel).
constexpr int kMaxSearchedGpus = 10;

// What the search needs of one node, in local-rank indices: direct GPU-to-GPU bandwidth (per direction,
// summed over working links; 0 where there is none) and the index of each GPU's NIC.
struct NodeShape {
  int gpus = 0;
  int nics = 0;
  bool nvswitch = false;
  std::vector<double> bw;  // [from * gpus + to]
  std::vector<int> nic;    // per GPU (group_nics): -1 without a NIC, or farther from it than another GPU
  // The least NVLink bandwidth a GPU of the node has to the others, per direction: its direct links to GPUs
  // and its NVSwitch ports, summed (0: none).
  double nvlink_Bps = 0;
  bool mesh() const {
    return std::any_of(bw.begin(), bw.end(), [](double b) { return b > 0; });
  }
  double link(int a, int b) const { return bw[static_cast<std::size_t>(a) * gpus + b]; }
};

// The vertices and links of each node, and a key that is equal for nodes built alike (same kinds, links and
// local-rank placement, by the order of their vertices): the shape of the first node of a key is every one's.
struct NodeIndex {
  std::map<int, std::vector<VertexId>> vertices;  // node -> its vertices, by id

  explicit NodeIndex(const Topology& t) {
    for (VertexId v = 0; v < t.num_vertices(); ++v)
      if (t.vertex(v).node >= 0) vertices[t.vertex(v).node].push_back(v);
  }

  std::vector<double> key(const Topology& t, int node) const {
    const auto& vs = vertices.at(node);
    std::map<VertexId, double> ordinal;
    for (std::size_t i = 0; i < vs.size(); ++i)
      ordinal[vs[i]] = static_cast<double>(i);
    std::vector<double> k;
    for (VertexId v : vs) {
      k.push_back(static_cast<double>(t.vertex(v).kind));
      k.push_back(t.vertex(v).local_rank);
      for (auto [e, end] = boost::out_edges(v, t.graph()); e != end; ++e) {
        const auto it = ordinal.find(boost::target(*e, t.graph()));
        const std::size_t l = t.graph()[*e].link;
        k.push_back(it == ordinal.end() ? -1.0 : it->second);
        k.push_back(static_cast<double>(t.link(l).kind));
        k.push_back(t.effective_bandwidth_Bps(l));
        k.push_back(t.effective_latency_s(l));
        k.push_back(t.link_failed(l) ? 1.0 : 0.0);
      }
      k.push_back(-2.0);
    }
    return k;
  }
};

NodeShape shape_of(const Topology& t, const std::vector<int>& group) {
  NodeShape s;
  s.gpus = static_cast<int>(group.size());
  s.bw.assign(static_cast<std::size_t>(s.gpus) * s.gpus, 0.0);
  const int node = t.node_of_rank(group[0]);
  std::map<VertexId, int> local;
  for (int g = 0; g < s.gpus; ++g)
    local[t.gpus()[group[g]]] = g;
  s.nvlink_Bps = std::numeric_limits<double>::infinity();
  for (int g = 0; g < s.gpus; ++g) {
    const VertexId v = t.gpus()[group[g]];
    double nvlink_Bps = 0;
    for (auto [e, end] = boost::out_edges(v, t.graph()); e != end; ++e) {
      const std::size_t l = t.graph()[*e].link;
      const auto it = local.find(boost::target(*e, t.graph()));
      const bool to_switch = t.vertex(boost::target(*e, t.graph())).kind == VertexKind::NvSwitch;
      if (it != local.end() && !t.link_failed(l))
        s.bw[static_cast<std::size_t>(g) * s.gpus + it->second] += t.effective_bandwidth_Bps(l);
      if ((it != local.end() || to_switch) && !t.link_failed(l)) nvlink_Bps += t.effective_bandwidth_Bps(l);
      if (to_switch) s.nvswitch = true;
    }
    s.nvlink_Bps = std::min(s.nvlink_Bps, nvlink_Bps);
  }
  if (s.gpus == 0) s.nvlink_Bps = 0;
  s.nics = static_cast<int>(t.nics_of_node(node).size());
  s.nic = group_nics(t, group);  // a channel enters and leaves through the GPUs nearest its NIC
  return s;
}

// Undirected Hamiltonian cycles over direct links, packed into the links' capacity: a link carries as many
// cycles as it has units of the node's slowest link (DGX-1V: 1 or 2 NVLinks). The most cycles that fit, each
// then used in both directions (a ring and its reverse use the two directions of the same links), is how
// NCCL fills a mesh; DGX-1V packs 3 (its "three interwoven rings"), DGX-1 P100 2. Backtracking over the
// cycles in order; 8 GPUs have at most 2,520 cycles.
class CyclePacker {
 public:
  explicit CyclePacker(const NodeShape& s) : s_(s), units_(static_cast<std::size_t>(s.gpus) * s.gpus, 0) {
    double unit = std::numeric_limits<double>::infinity();
    for (double b : s.bw)
      if (b > 0) unit = std::min(unit, b);
    for (std::size_t i = 0; i < units_.size(); ++i)
      units_[i] = s.bw[i] > 0 ? static_cast<int>(std::floor(s.bw[i] / unit * (1 + 1e-9))) : 0;
    collect({0}, 1u);
  }

  std::vector<std::vector<int>> pack() {
    // No GPU can be in more cycles than half its link units.
    int bound = std::numeric_limits<int>::max();
    for (int g = 0; g < s_.gpus; ++g) {
      int at = 0;
      for (int h = 0; h < s_.gpus; ++h)
        at += units_[index(g, h)];
      bound = std::min(bound, at / 2);
    }
    for (int target = bound; target >= 1; --target) {
      std::vector<std::vector<int>> chosen;
      steps_ = 0;
      if (fill(target, 0, chosen)) return chosen;
    }
    return {};
  }

 private:
  std::size_t index(int a, int b) const { return static_cast<std::size_t>(a) * s_.gpus + b; }

  void collect(std::vector<int> path, unsigned visited) {
    const int at = path.back();
    if (static_cast<int>(path.size()) == s_.gpus) {
      if (units_[index(at, 0)] > 0 && (s_.gpus < 3 || path[1] < path.back())) cycles_.push_back(path);
      return;
    }
    for (int next = 0; next < s_.gpus; ++next) {
      if (units_[index(at, next)] == 0 || (visited >> next) & 1u) continue;
      path.push_back(next);
      collect(path, visited | (1u << next));
      path.pop_back();
    }
  }

  // Places `target` more cycles from cycles_[from..]; a budget keeps a hopeless target from taking long.
  bool fill(int target, std::size_t from, std::vector<std::vector<int>>& chosen) {
    if (target == 0) return true;
    for (std::size_t i = from; i < cycles_.size() && ++steps_ < kMaxSteps; ++i) {
      const auto& cycle = cycles_[i];
      if (!fits(cycle)) continue;
      use(cycle, -1);
      chosen.push_back(cycle);
      if (fill(target - 1, i, chosen)) return true;
      chosen.pop_back();
      use(cycle, +1);
    }
    return false;
  }

  bool fits(const std::vector<int>& cycle) const {
    for (std::size_t i = 0; i < cycle.size(); ++i)
      if (units_[index(cycle[i], cycle[(i + 1) % cycle.size()])] == 0) return false;
    return true;
  }
  void use(const std::vector<int>& cycle, int delta) {
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      const int a = cycle[i], b = cycle[(i + 1) % cycle.size()];
      units_[index(a, b)] += delta;
      units_[index(b, a)] += delta;
    }
  }

  static constexpr long kMaxSteps = 2'000'000;
  const NodeShape& s_;
  std::vector<int> units_;
  std::vector<std::vector<int>> cycles_;
  long steps_ = 0;
};

// One node's part of every channel, in local indices, and why.
struct ShapeRings {
  std::vector<std::vector<int>> order;
  std::vector<std::string> why;
  double slowest_Bps = std::numeric_limits<double>::infinity();  // the slowest channel's share of a mesh hop
};

// The directed mesh rings: every packed cycle, then its reverse.
std::vector<std::vector<int>> mesh_rings(const NodeShape& s) {
  if (!s.mesh() || s.gpus > kMaxSearchedGpus || s.gpus < 2) return {};
  std::vector<std::vector<int>> rings;
  for (const auto& cycle : CyclePacker(s).pack()) {
    rings.push_back(cycle);
    rings.emplace_back(cycle.rbegin(), cycle.rend());
  }
  return rings;
}

ShapeRings search_shape(const NodeShape& s, int channels, bool one_node) {
  ShapeRings out;
  const int G = s.gpus;
  const auto mesh = mesh_rings(s);
  std::vector<int> uses(static_cast<std::size_t>(G) * G, 0);
  auto hop = [&](int a, int b) -> int& { return uses[static_cast<std::size_t>(a) * G + b]; };
  std::vector<int> meshed;
  std::vector<int> taken(mesh.size(), 0);  // channels on each mesh ring so far
  for (int c = 0; c < channels; ++c) {
    // The channel's NIC, and the GPUs that use it.
    std::vector<int> users;
    std::string via;
    if (!one_node && s.nics > 0) {
      const int k = c % s.nics;
      for (int g = 0; g < G; ++g)
        if (s.nic[g] == k) users.push_back(g);
      if (!users.empty()) via = fmt::format("NIC {}, ", k);
    }
    auto uses_nic = [&](int g) { return std::find(users.begin(), users.end(), g) != users.end(); };
    const int entry = users.empty() ? c % G : users[static_cast<std::size_t>(c / s.nics) % users.size()];
    std::vector<int> order;
    if (!mesh.empty()) {
      // Where a ring steps between two GPUs of the channel's NIC, cutting it there lets the channel enter and
      // leave through that NIC. Of the rings that allow that, the one fewest channels took so far.
      auto shared_step = [&](const std::vector<int>& ring) -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < ring.size(); ++i)
          if (uses_nic(ring[i]) && uses_nic(ring[(i + ring.size() - 1) % ring.size()])) return i;
        return std::nullopt;
      };
      std::size_t pick = c % mesh.size();
      if (!users.empty()) {
        std::optional<std::size_t> best;
        for (std::size_t j = 0; j < mesh.size(); ++j) {
          const std::size_t r = (c + j) % mesh.size();
          if (shared_step(mesh[r]) && (!best || taken[r] < taken[*best])) best = r;
        }
        if (best) pick = *best;
      }
      ++taken[pick];
      const auto& ring = mesh[pick];
      // One node keeps the whole cycle, from the entry GPU; else the cut above, or before a GPU of the NIC.
      std::size_t cut = 0;
      if (!users.empty()) {
        std::optional<std::size_t> enter;
        for (std::size_t i = 0; i < ring.size() && !enter; ++i)
          if (uses_nic(ring[i])) enter = i;
        cut = shared_step(ring).value_or(enter.value_or(0));
      } else {
        cut = static_cast<std::size_t>(std::find(ring.begin(), ring.end(), entry) - ring.begin());
      }
      for (std::size_t i = 0; i < ring.size(); ++i)
        order.push_back(ring[(cut + i) % ring.size()]);
      const std::size_t hops = one_node ? order.size() : order.size() - 1;
      for (std::size_t i = 0; i < hops; ++i)
        ++hop(order[i], order[(i + 1) % order.size()]);
      meshed.push_back(c);
      out.why.push_back(fmt::format("channel {}: {}in at GPU {}, out at GPU {}, over direct links", c, via,
                                    order.front(), order.back()));
    } else {
      // Switched: local-rank order from the entry GPU, leaving through a GPU of the same NIC when the
      // rotation would not (and another GPU uses it).
      for (int j = 0; j < G; ++j)
        order.push_back((entry + j) % G);
      std::vector<int> exits;
      for (int g : users)
        if (g != entry) exits.push_back(g);
      if (!exits.empty() && !uses_nic(order.back())) {
        const int exit = *std::find_first_of(order.rbegin(), order.rend(), exits.begin(), exits.end());
        order.erase(std::find(order.begin(), order.end(), exit));
        order.push_back(exit);
      }
      const char* how = s.mesh() ? "no ring over the direct links" : (s.nvswitch ? "NVSwitch" : "switched");
      out.why.push_back(fmt::format("channel {}: {}in at GPU {}, out at GPU {} ({}: local-rank order)", c,
                                    via, order.front(), order.back(), how));
    }
    out.order.push_back(std::move(order));
  }
  // Each mesh channel's share of its slowest hop, now that every channel has its hops.
  for (int c : meshed) {
    const auto& order = out.order[c];
    double slowest = std::numeric_limits<double>::infinity();
    const std::size_t hops = one_node ? order.size() : order.size() - 1;
    for (std::size_t i = 0; i < hops; ++i) {
      const int a = order[i], b = order[(i + 1) % order.size()];
      slowest = std::min(slowest, s.link(a, b) / hop(a, b));
    }
    out.slowest_Bps = std::min(out.slowest_Bps, slowest);
    out.why[c] += fmt::format(" (slowest hop {} per channel)", format_bandwidth(slowest));
  }
  return out;
}

}  // namespace

RingSearch search_rings(const Topology& topology, int channels) {
  RingSearch result;
  result.rings.assign(channels, {});
  const auto groups = node_groups(topology);
  const bool one_node = groups.size() == 1;
  const NodeIndex index(topology);
  std::map<std::vector<double>, ShapeRings> searched;
  for (std::size_t n = 0; n < groups.size(); ++n) {
    const auto& group = groups[n];
    const auto key = index.key(topology, topology.node_of_rank(group[0]));
    auto it = searched.find(key);
    if (it == searched.end())
      it = searched.emplace(key, search_shape(shape_of(topology, group), channels, one_node)).first;
    for (int c = 0; c < channels; ++c)
      for (int local : it->second.order[c])
        result.rings[c].push_back(group[local]);
    if (n == 0) {
      for (const std::string& line : it->second.why)
        result.why.push_back(fmt::format("node 0 {}", line));
    }
  }
  return result;
}

namespace {
// A channel is one thread block, which moves at most NCCL's per-channel speed (channel_speed_cap_Bps); NCCL's
// search opens channels until their speeds fill the GPUs' NVLinks (src/graph/search.cc: nChannels x a speed
// of speedArrayIntra), so a node whose GPUs have more NVLink than one channel per NIC or GPU can drive (two
// GPUs on a bridge of 12 links, an NVL72 partition of 4) gets more. 0 where the architecture is unknown or
// the GPUs of a node have no NVLink.
int fill_channels(const Topology& topology, const NodeShape& s) {
  const double block_Bps = channel_speed_cap_Bps(topology.gpu_arch(), false);
  if (s.gpus < 2 || s.nvlink_Bps <= 0 || !std::isfinite(block_Bps)) return 0;
  return static_cast<int>(std::ceil(s.nvlink_Bps / block_Bps - 1e-9));
}
// NCCL's ring channels on one NVSwitch node, as its setup makes them (NCCL 2.30). Its search
// (src/graph/search.cc, ncclTopoCompute) tries its per-channel speeds from the highest, keeps the count x
// speed that moves the most of a GPU's NVLink (its payload rate, as NCCL counts it too: 20 to 20.6 GB/s per
// 25 GB/s link, src/graph/topo.h), the highest speed on ties, stops once that fills the NVLink and gives up
// on speeds under half the best found; ncclTopoDupChannels doubles the channels (to at most 32) where the
// speed is 25 GB/s or more, unless the GPUs are newer than Ampere, the speed under 50 and the channels more
// than 4; ncclTopoPostset (src/graph/connect.cc) doubles them again (to at most 64). H100 and A100: 6
// channels at 60 and 40 GB/s, 24 thread blocks, as NCCL 2.19.3 (8 x H100, NVIDIA/nccl#1367: "12 one-direction
// channel", "after duplicate, there are 24") and 2.29.2 (4 x H100, "24 coll channels") report. A GPU's thread
// blocks then carry a 24th of its traffic each, so a mid-size collective's pipeline has the chunks NCCL's
// has. 0 where the architecture is unknown or the GPUs have no NVLink.
struct NcclNodeChannels {
  int searched = 0;       // the search's channels
  double speed_GBps = 0;  // and their speed
  int duplicated = 0;  // the ring graph's channels after ncclTopoDupChannels (each at speed / 2 if doubled)
  int blocks = 0;      // thread blocks after both doublings
};
// ncclTopoDupChannels (src/graph/search.cc): a graph of 25 GB/s a channel or more gets twice the channels at
// half the speed, except on GPUs newer than Ampere under 50 GB/s with more than 4 channels; at most 32.
int nccl_duplicated_channels(topo::GpuArch arch, int channels, double speed_GBps) {
  const bool after_ampere = arch == topo::GpuArch::Hopper || arch == topo::GpuArch::Blackwell;
  if (speed_GBps < 25.0 || (after_ampere && speed_GBps < 50.0 && channels > 4)) return channels;
  return std::min(32, 2 * channels);
}
NcclNodeChannels nccl_node_channels(const Topology& topology, const NodeShape& s) {
  NcclNodeChannels out;
  const auto arch = topology.gpu_arch();
  if (!arch || s.gpus < 2 || s.nvlink_Bps <= 0) return out;
  const double bw_GBps = s.nvlink_Bps / 1e9;
  constexpr int kMaxSearchChannels = 32, kMaxChannels = 64;  // MAXCHANNELS / 2 and MAXCHANNELS
  int& channels = out.searched;
  double& speed = out.speed_GBps;
  for (const double v : nccl_intra_speeds_GBps(*arch)) {
    if (v > bw_GBps) continue;
    if (channels > 0 && v / speed <= 0.49) break;
    const int c = std::min(kMaxSearchChannels, static_cast<int>(std::floor(bw_GBps / v + 1e-9)));
    if (c * v > channels * speed) channels = c, speed = v;
    if (channels * speed >= bw_GBps - 1e-9) break;
  }
  if (channels == 0) return out;
  out.duplicated = nccl_duplicated_channels(*arch, channels, speed);
  out.blocks = std::min(kMaxChannels, 2 * out.duplicated);
  return out;
}

// A GPU's path to a NIC as NCCL's search counts it: the least of the NIC's links, its network port at line
// rate (NCCL's NET bandwidth is the port's speed) and its PCIe link at NCCL's rate, 3/4 of the raw one (src/
// graph/topo.cc: a x16 link is 12, 24 and 48 GB/s at Gen3, 4 and 5; cclab's PCIe links carry the rate after
// 128b/130b encoding, 15.75, 31.5 and 63 GB/s).
double nccl_nic_GBps(const Topology& t, VertexId nic) {
  double bw = std::numeric_limits<double>::infinity();
  for (auto [e, end] = boost::out_edges(nic, t.graph()); e != end; ++e) {
    const std::size_t l = t.graph()[*e].link;
    if (t.link_failed(l)) continue;
    const topo::Link& link = t.link(l);
    bw = std::min(bw, link.kind == topo::LinkKind::Pcie ? link.bandwidth_Bps * 130.0 / 128.0 * 0.75
                                                        : link.bandwidth_Bps);
  }
  return bw / 1e9;
}

// The index of the first (highest) speed at most `limit`, or the last.
std::size_t first_at_most(std::span<const double> speeds, double limit) {
  std::size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > limit + 1e-9)
    ++i;
  return i;
}

// NCCL's PAT reads the tree's graph and NVLSTree the NVLS one (src/init.cc, the graphs by algorithm).
NcclComm shared_graphs(NcclComm c) {
  c.graphs[static_cast<int>(NcclAlgo::Pat)] = c.graph(NcclAlgo::Tree);
  c.graphs[static_cast<int>(NcclAlgo::NvlsTree)] = c.graph(NcclAlgo::Nvls);
  return c;
}

}  // namespace

NcclSearch nccl_search(const Topology& topology) {
  NcclSearch out;
  const auto arch = topology.gpu_arch();
  const auto groups = node_groups(topology);
  if (!arch) {
    out.why_not = "the topology does not say its GPUs' architecture (gpu_arch), which NCCL's constants need";
    return out;
  }
  if (groups.empty()) {
    out.why_not = "the topology has no GPUs";
    return out;
  }
  const NodeShape s = shape_of(topology, groups[0]);
  NcclComm c;
  c.arch = *arch;
  c.host = topology.host_cpu();
  c.nodes = static_cast<int>(groups.size());
  c.ranks = static_cast<int>(topology.gpus().size());
  c.nvlink = s.nvlink_Bps > 0 || s.gpus == 1;
  if (!c.nvlink) {
    out.why_not = "the GPUs of a node talk over PCIe, where cclab does not reproduce NCCL's search";
    return out;
  }
  const bool nvls = (c.arch == topo::GpuArch::Hopper || c.arch == topo::GpuArch::Blackwell) && s.nvswitch;
  const double nvlink_GBps = s.nvlink_Bps / 1e9;
  auto& ring = c.graphs[static_cast<int>(NcclAlgo::Ring)];
  auto& tree = c.graphs[static_cast<int>(NcclAlgo::Tree)];
  auto& nvls_graph = c.graphs[static_cast<int>(NcclAlgo::Nvls)];
  // NVLS's search (ncclTopoSearchTryNvls): a channel per head GPU, each pulling from every GPU of the node
  // and the head twice, so a GPU's NVLink carries (heads + 1) channels' speed; then (pass 2) bwInter rises
  // through the speeds while it is under twice bwIntra and, across nodes, the head's NIC carries it.
  auto search_nvls = [&](std::span<const double> speeds, int heads, double nic_limit_GBps) {
    const std::size_t at = first_at_most(speeds, std::min(nic_limit_GBps, nvlink_GBps / (heads + 1)));
    if (speeds[at] * (heads + 1) > nvlink_GBps + 1e-9) return;
    std::size_t inter = at;
    while (inter > 0 && speeds[inter] < 2 * speeds[at] && speeds[inter - 1] <= nic_limit_GBps + 1e-9)
      --inter;
    nvls_graph = {heads, speeds[at], speeds[inter]};
  };
  if (c.nodes == 1) {
    if (s.gpus < 2) {
      out.comm = c;  // one GPU: NCCL has nothing to tune
      return out;
    }
    const NcclNodeChannels n = nccl_node_channels(topology, s);
    if (n.searched == 0) {
      out.why_not = "cclab does not reproduce NCCL's ring search on this node";
      return out;
    }
    // The tree's search is held to the ring's channels and finds the ring's speed on one node.
    const double speed = n.speed_GBps * n.searched / n.duplicated;
    ring = tree = {n.duplicated, speed, speed};
    if (nvls)
      search_nvls(nccl_intra_speeds_GBps(c.arch), std::min(32, s.gpus),
                  std::numeric_limits<double>::infinity());
    out.comm = shared_graphs(c);
    return out;
  }
  const auto nics = topology.nics_of_node(topology.node_of_rank(groups[0][0]));
  if (nics.empty()) {
    out.why_not = "the nodes have no NIC";
    return out;
  }
  const double nic_GBps = nccl_nic_GBps(topology, nics[0]);
  const std::span<const double> speeds = nccl_inter_speeds_GBps(c.arch);
  // A GPU's NVLink carries every channel but the one it leaves the node by.
  const double share = s.gpus > 1 ? static_cast<double>(s.gpus - 1) / s.gpus : 0.0;
  auto fits = [&](int channels, double speed) { return channels * speed * share <= nvlink_GBps + 1e-9; };
  // The ring: one channel per NIC (more where a NIC carries several at the top speed it allows), at the
  // highest speed the NIC and NVLink carry; lower speeds that would fit more channels move no more and lose
  // the tie (NCCL keeps a graph only for a larger channels x speed). Two H800 nodes: 8 channels at 22 GB/s,
  // held by NVLink, as NCCL's own table there says (NVIDIA/nccl#1154, its tree's 68.8 GB/s).
  std::size_t at = first_at_most(speeds, nic_GBps);
  const int channels =
      std::min(32, static_cast<int>(nics.size()) *
                       std::max(1, static_cast<int>(std::floor(nic_GBps / speeds[at] + 1e-9))));
  while (at < speeds.size() && !fits(channels, speeds[at]))
    ++at;
  if (at == speeds.size()) {
    out.why_not = "no speed of NCCL's search fits the node's NVLink";
    return out;
  }
  const int dup = nccl_duplicated_channels(c.arch, channels, speeds[at]);
  const double ring_speed = speeds[at] * channels / dup;
  ring = {dup, ring_speed, ring_speed};
  // The tree: the ring's channels; across nodes each NIC carries its share, and (pass 2) bwIntra rises while
  // under twice bwInter and NVLink carries it (the 2-node and CollNet case the tuning model reads).
  std::size_t tree_at =
      first_at_most(speeds, nic_GBps * static_cast<double>(nics.size()) / static_cast<double>(dup));
  while (tree_at + 1 < speeds.size() && !fits(dup, speeds[tree_at]))
    ++tree_at;  // pass 1 searches bwIntra and bwInter at one speed
  std::size_t intra = tree_at;
  while (intra > 0 && speeds[intra] < 2 * speeds[tree_at] && fits(dup, speeds[intra - 1]))
    --intra;
  tree = {dup, speeds[intra], speeds[tree_at]};
  if (nvls) search_nvls(speeds, std::min({32, s.gpus, static_cast<int>(nics.size())}), nic_GBps);
  out.comm = shared_graphs(c);
  return out;
}

std::vector<std::vector<int>> nvlink_chain_orders(const Topology& t, const std::vector<int>& group) {
  if (group.size() < 3) return {group};
  const NodeShape shape = shape_of(t, group);
  std::vector<std::vector<int>> orders;
  // mesh_rings lists each packed cycle and then its reverse: the cycles are every other one.
  const auto rings = mesh_rings(shape);
  for (std::size_t i = 0; i < rings.size(); i += 2) {
    std::vector<int> order;
    for (const int local : rings[i])
      order.push_back(group[local]);
    orders.push_back(std::move(order));
  }
  if (orders.empty()) orders.push_back(group);
  return orders;
}

int nvlink_fill_channels(const Topology& topology) {
  const auto groups = node_groups(topology);
  return groups.empty() ? 0 : fill_channels(topology, shape_of(topology, groups[0]));
}

int default_ring_channels(const Topology& topology, std::string* why) {
  const auto groups = node_groups(topology);
  if (groups.empty()) return 1;
  const NodeShape s = shape_of(topology, groups[0]);
  const bool one_node = groups.size() == 1;
  int channels = std::max(1, s.nics);
  std::string reason = s.nics > 0 ? fmt::format("one per NIC of a node ({})", s.nics) : "";
  if (s.nvswitch && s.gpus > channels) {
    channels = s.gpus;
    reason = fmt::format("one per GPU of an NVSwitch node ({})", s.gpus);
  }
  if (const std::size_t rings = mesh_rings(s).size(); rings > 0 && static_cast<int>(rings) >= channels) {
    channels = static_cast<int>(rings);
    reason = fmt::format("NVLink mesh: {} Hamiltonian cycles packed into the links, each in both directions",
                         rings / 2);
  }
  if (const int fill = fill_channels(topology, s); fill > channels) {
    channels = fill;
    reason = fmt::format(
        "enough for one thread block each, at NCCL's {:.0f} GB/s per channel, to fill a GPU's "
        "{:.0f} GB/s of NVLink",
        channel_speed_cap_Bps(topology.gpu_arch(), false) / 1e9, s.nvlink_Bps / 1e9);
  }
  if (const NcclNodeChannels nccl =
          one_node && s.nvswitch ? nccl_node_channels(topology, s) : NcclNodeChannels{};
      nccl.blocks > channels) {
    channels = nccl.blocks;
    reason = fmt::format(
        "NCCL's on one NVSwitch node: its search puts {} channels at {:.0f} GB/s on a GPU's {:.0f} GB/s of "
        "NVLink, its setup makes each {} thread blocks",
        nccl.searched, nccl.speed_GBps, s.nvlink_Bps / 1e9, nccl.blocks / nccl.searched);
  }
  if (!one_node && s.nics > 0 && channels % s.nics != 0) {
    // Every NIC carries as many channels as the others (channel c leaves through NIC c mod N).
    channels += s.nics - channels % s.nics;
    reason += fmt::format(", rounded up to a multiple of the {} NICs", s.nics);
  }
  if (reason.empty())
    reason = s.mesh() ? "direct GPU links that hold no ring of all the GPUs"
                      : "the nodes have no NIC and no NVLink";
  if (why) *why = fmt::format("{} channel{} ({})", channels, channels == 1 ? "" : "s", reason);
  return channels;
}

}  // namespace cclab::planners
