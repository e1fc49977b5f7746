#include "topology/presets.hpp"

#include <array>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/units.hpp"
#include "topology/yaml_io.hpp"

namespace cclab::topo {
namespace {

// Per-hop latencies of the built-in models. They are defaults to calibrate (cclab calibrate): about 2-3 us
// GPU to GPU across an InfiniBand switch (NCCL's tuning model uses 0.6-4 us NVLink and 5-14 us NET hardware
// latencies per step, which include protocol overheads the network model adds separately).
constexpr double kNvLinkHopLatency_s = 0.5e-6;
constexpr double kPcieHopLatency_s = 0.4e-6;
// A GPU's link to an NVSwitch fabric: a GPU-to-GPU message crosses two, 0.6 us, which is NCCL's own cost of
// an LL step over NVLink (hwLat, src/graph/tuning.cc), the least a protocol step pays
// (engine/model/protocol.hpp); LL128 and Simple steps cost NCCL's 1.9 and 3.4 us. Runs with one process per
// GPU meet it: 8 x H20 took 12.5 us at 4 B (deepseek-ai/DeepEP#303; 6.6 us of launch and 14 steps make 15.0)
// and 19.5-27.8 us from 256 KiB to 1 MiB (kvcache-ai/Mooncake PR #3484, NCCL 2.30; 18.3-28.0). Until
// 2026-12-06 a GPU-to-GPU message took 1 us here and 2 us on DGX A100, set from a one-channel ring series on
// 2 to 8 A100s (nccl-tests#123) that one thread launched for all GPUs (-g N): from four GPUs on its times are
// 4.2 us per GPU (16.9 to 33.7 us), the host launching each GPU's kernel in turn, not NVSwitch steps
// (docs/accuracy.md, "Reading the tables").
constexpr double kNvSwitchHopLatency_s = 0.3e-6;

// PCIe x16 per-direction payload rate: lanes x GT/s x 128/130 encoding / 8 bits.
constexpr double kPcieGen4x16_Bps = 16 * 16e9 * 128.0 / 130.0 / 8;  // 31.5 GB/s
constexpr double kPcieGen5x16_Bps = 16 * 32e9 * 128.0 / 130.0 / 8;  // 63.0 GB/s

// Refuses worlds beyond kMaxPresetGpus and fabrics beyond kMaxSpines, before anything is built.
void check_preset_size(std::string_view model, long nodes, long gpus_per_node, const FabricParams& fabric) {
  if (nodes < 1 || gpus_per_node < 1)
    throw ConfigError(
        fmt::format("{}: nodes and gpus must be >= 1 (got {} and {})", model, nodes, gpus_per_node));
  if (nodes * gpus_per_node > kMaxPresetGpus) {
    throw ConfigError(fmt::format("{}: {} nodes x {} GPUs is more than the {} GPUs a preset may have", model,
                                  nodes, gpus_per_node, kMaxPresetGpus));
  }
  if (fabric.spines > kMaxSpines)
    throw ConfigError(fmt::format("{}: spines must be <= {} (got {})", model, kMaxSpines, fabric.spines));
}

std::string node_prefix(int node) {
  return fmt::format("n{}.", node);
}

// The servers under each of the first-level switches that hold `per_switch` of the job's `job_nodes` servers
// in order: the job's, then a neighbour job's (servers job_nodes .. nodes-1) in spare ports, round robin.
std::vector<std::vector<int>> place_servers(int job_nodes, int nodes, int per_switch) {
  std::vector<std::vector<int>> under(
      static_cast<std::size_t>(std::max((job_nodes + per_switch - 1) / per_switch, 1)));
  for (int n = 0; n < nodes; ++n)
    under[n < job_nodes ? n / per_switch : (n - job_nodes) % under.size()].push_back(n);
  return under;
}

// Up-links from `below` to each of `above`, and the NICs of `servers` down to `below`.
void attach_switch(Topology& t, VertexId below, const std::vector<VertexId>& above, double uplink_Bps,
                   const std::vector<int>& servers, const std::vector<std::vector<VertexId>>& nics,
                   double nic_Bps, const FabricParams& f) {
  for (VertexId up : above)
    t.add_link(below, up, f.link_kind, uplink_Bps, f.link_latency_s);
  for (int n : servers)
    for (VertexId nic : nics[n])
      t.add_link(nic, below, f.link_kind, nic_Bps, f.link_latency_s);
}

// Joins the NICs of all nodes (nics[node][i]) with the fabric. Returns nothing: the topology is extended in
// place.
void join_nics(Topology& t, const std::vector<std::vector<VertexId>>& nics, int job_nodes, double nic_Bps,
               const FabricParams& f) {
  const int per_node = nics.empty() ? 0 : static_cast<int>(nics[0].size());
  const int nodes = static_cast<int>(nics.size());
  switch (f.fabric) {
    case Fabric::SingleSwitch: {
      VertexId sw = t.add_vertex(Vertex{"switch", VertexKind::Switch, -1, -1, f.sharp});
      for (const auto& node : nics)
        for (VertexId nic : node)
          t.add_link(nic, sw, f.link_kind, nic_Bps, f.link_latency_s);
      return;
    }
    case Fabric::LeafSpine: {
      // Each leaf has nodes_per_leaf x per_node down-links; its up-link capacity is that divided by oversub,
      // spread evenly over the spines. A neighbour job's servers (after the job's `job_nodes`) sit in spare
      // ports of the job's leaves, neighbour k on leaf k mod leaves: the up-links stay as they are and carry
      // both jobs.
      const std::vector<std::vector<int>> on_leaf = place_servers(job_nodes, nodes, f.nodes_per_leaf);
      const double uplink_Bps = f.nodes_per_leaf * per_node * nic_Bps / f.oversubscription / f.spines;
      std::vector<VertexId> spines;
      for (int s = 0; s < f.spines; ++s)
        spines.push_back(
            t.add_vertex(Vertex{fmt::format("spine{}", s), VertexKind::Switch, -1, -1, f.sharp}));
      for (std::size_t l = 0; l < on_leaf.size(); ++l) {
        VertexId leaf = t.add_vertex(Vertex{fmt::format("leaf{}", l), VertexKind::Switch, -1, -1, f.sharp});
        attach_switch(t, leaf, spines, uplink_Bps, on_leaf[l], nics, nic_Bps, f);
      }
      return;
    }
    case Fabric::FatTree: {
      // Each edge switch has k/2 servers' NICs below and k/2 up-links, one to each aggregation switch of its
      // pod, carrying the down-links' bandwidth / oversub; aggregation switch j of every pod has one link to
      // each of cores j·k/2 .. j·k/2 + k/2 - 1, of the same bandwidth (no oversubscription above the edge).
      // Servers fill edge switches in order; a neighbour job's take spare ports, neighbour k under edge k mod
      // edges. Equal-cost paths (k/2 aggregation switches, then k/2 cores) are split by ECMP.
      const int half = f.fat_tree_k / 2;
      const int edges = (job_nodes + half - 1) / half;
      const int pods = (edges + half - 1) / half;
      if (pods > f.fat_tree_k) {
        throw ConfigError(fmt::format("a {}-ary fat-tree holds {} servers, not {} (raise k)", f.fat_tree_k,
                                      f.fat_tree_k * half * half, job_nodes));
      }
      const double uplink_Bps = per_node * nic_Bps / f.oversubscription;
      std::vector<VertexId> cores;
      for (int c = 0; c < half * half; ++c)
        cores.push_back(t.add_vertex(Vertex{fmt::format("core{}", c), VertexKind::Switch, -1, -1, f.sharp}));
      const std::vector<std::vector<int>> on_edge = place_servers(job_nodes, nodes, half);
      for (int p = 0; p < pods; ++p) {
        std::vector<VertexId> aggs;
        for (int j = 0; j < half; ++j) {
          aggs.push_back(
              t.add_vertex(Vertex{fmt::format("pod{}.agg{}", p, j), VertexKind::Switch, -1, -1, f.sharp}));
          for (int c = 0; c < half; ++c)
            t.add_link(aggs[j], cores[j * half + c], f.link_kind, uplink_Bps, f.link_latency_s);
        }
        for (int e = p * half; e < std::min(edges, (p + 1) * half); ++e) {
          VertexId edge = t.add_vertex(
              Vertex{fmt::format("pod{}.edge{}", p, e - p * half), VertexKind::Switch, -1, -1, f.sharp});
          attach_switch(t, edge, aggs, uplink_Bps, on_edge[e], nics, nic_Bps, f);
        }
      }
      return;
    }
    case Fabric::Rail: {
      // NIC i of every node on rail switch i; one spine joins the rails for cross-rail traffic (sized for the
      // job's nodes; a neighbour job's NICs take spare rail ports).
      VertexId spine = t.add_vertex(Vertex{"rail-spine", VertexKind::Switch, -1, -1, f.sharp});
      const double uplink_Bps = job_nodes * nic_Bps / f.oversubscription;
      for (int i = 0; i < per_node; ++i) {
        VertexId rail = t.add_vertex(Vertex{fmt::format("rail{}", i), VertexKind::Switch, -1, -1, f.sharp});
        t.add_link(rail, spine, f.link_kind, uplink_Bps, f.link_latency_s);
        for (int n = 0; n < nodes; ++n)
          t.add_link(nics[n][i], rail, f.link_kind, nic_Bps, f.link_latency_s);
      }
      return;
    }
  }
}

// The job's NICs and, with f.neighbour_nodes, the neighbour job's (FabricParams), joined by the fabric.
void add_fabric(Topology& t, std::vector<std::vector<VertexId>> nics, double nic_Bps, const FabricParams& f) {
  const int job_nodes = static_cast<int>(nics.size());
  const std::size_t per_node = nics.empty() ? 0 : nics[0].size();
  for (int k = 0; k < f.neighbour_nodes; ++k) {
    nics.emplace_back();
    for (std::size_t i = 0; i < per_node; ++i)
      nics.back().push_back(t.add_vertex(Vertex{fmt::format("nb{}.nic{}", k, i), VertexKind::Nic}));
  }
  t.set_ecmp_seed(f.ecmp_seed);
  join_nics(t, nics, job_nodes, nic_Bps, f);
  for (int k = 0; f.neighbour_nodes > 1 && k < f.neighbour_nodes; ++k)
    for (std::size_t i = 0; i < per_node; ++i)
      t.add_background({nics[job_nodes + k][i], nics[job_nodes + (k + 1) % f.neighbour_nodes][i], 1});
}

// The NVSwitch node (DGX/HGX A100, H100, H200, B200; a GB200 NVL72 rack): every GPU has one aggregate link to
// the node's NVSwitch fabric; PCIe switches under the host CPU each hold GPUs and NICs (a DGX: 4 switches
// with 2 GPUs and 2 NICs each; NVIDIA DGX A100 / H100 / B200 user guides, system topology chapters). With
// other counts, GPU g sits on switch g*S/G and NIC i on switch i*S/N, S = G/2 switches (at least one).
struct NvSwitchNode {
  int gpus = 8;
  int nics = 8;
  double nvlink_Bps = 0;  // per GPU per direction
  double nic_Bps = 0;
  double pcie_Bps = 0;
  GpuArch arch = GpuArch::Hopper;
  HostCpu host = HostCpu::Intel;
};

Topology nvswitch_nodes(const std::string& model, int nodes, const NvSwitchNode& node,
                        const FabricParams& f) {
  check_preset_size(model, nodes, node.gpus, f);
  if (node.nics < 0 || (node.nics == 0 && nodes > 1))
    throw ConfigError(
        fmt::format("{}: nics must be >= 1 with more than one node (got {})", model, node.nics));
  Topology t(fmt::format("{}:{}", model, nodes));
  t.set_gpu_arch(node.arch);
  t.set_host_cpu(node.host);
  const int switches = std::max(1, node.gpus / 2);
  std::vector<std::vector<VertexId>> nics(nodes);
  for (int n = 0; n < nodes; ++n) {
    const std::string pre = node_prefix(n);
    std::vector<VertexId> gpus;
    for (int g = 0; g < node.gpus; ++g)
      gpus.push_back(t.add_vertex(Vertex{fmt::format("{}gpu{}", pre, g), VertexKind::Gpu, n, g}));
    VertexId nvs = t.add_vertex(Vertex{pre + "nvswitch", VertexKind::NvSwitch, n});
    VertexId cpu = t.add_vertex(Vertex{pre + "cpu", VertexKind::Cpu, n});
    for (int g = 0; g < node.gpus; ++g)
      t.add_link(gpus[g], nvs, LinkKind::NvSwitch, node.nvlink_Bps, kNvSwitchHopLatency_s);
    std::vector<VertexId> pcie;
    for (int s = 0; s < switches; ++s) {
      pcie.push_back(t.add_vertex(Vertex{fmt::format("{}pcie{}", pre, s), VertexKind::PcieSwitch, n}));
      t.add_link(pcie.back(), cpu, LinkKind::Pcie, node.pcie_Bps, kPcieHopLatency_s);
    }
    // Declared switch by switch (GPUs, then NICs), as a DGX lists them.
    for (int s = 0; s < switches; ++s) {
      for (int g = 0; g < node.gpus; ++g)
        if (g * switches / node.gpus == s)
          t.add_link(gpus[g], pcie[s], LinkKind::Pcie, node.pcie_Bps, kPcieHopLatency_s);
      for (int i = 0; i < node.nics; ++i) {
        if (i * switches / node.nics != s) continue;
        VertexId nic = t.add_vertex(Vertex{fmt::format("{}nic{}", pre, i), VertexKind::Nic, n});
        t.add_link(nic, pcie[s], LinkKind::Pcie, node.pcie_Bps, kPcieHopLatency_s);
        nics[n].push_back(nic);
      }
    }
  }
  if (node.nics > 0) add_fabric(t, nics, node.nic_Bps, f);
  return t;
}

// DGX-1: 8 GPUs in a hybrid cube-mesh of direct NVLinks (no NVSwitch): two fully connected quads (0-3, 4-7)
// and GPU g joined to g+4, where V100's 6 links per GPU double half of the pairs (24 links in all) and P100's
// 4 give each of the 16 pairs one (NVIDIA DGX-1 system architecture whitepapers; `nvidia-smi topo -m` on a
// DGX-1V shows NV2 for 0-3, 0-4, 1-2, 1-5, 2-3, 4-7, 5-6, 6-7 and NV1 for the other 8 pairs). Two links of a
// pair are one link of twice the bandwidth here. Four PCIe Gen3 switches, each with 2 GPUs and one EDR
// InfiniBand 100 Gb/s NIC; two per CPU socket, the sockets joined by QPI (2 x 9.6 GT/s links, 19.2 GB/s per
// direction each).
// `nic_count`: 4 as on a DGX-1, or 2 / 1 for servers of the same board cabled with fewer (on the first PCIe
// switch of each socket, then on the first switch: the GPUs of the others reach it across the CPU).
Topology dgx1(const std::string& model, int nodes, bool volta, double nic_Bps, int nic_count,
              const FabricParams& f) {
  check_preset_size(model, nodes, 8, f);
  if (nic_count != 0 && nic_count != 1 && nic_count != 2 && nic_count != 4)
    throw ConfigError(fmt::format("{}: nics must be 1, 2 or 4 (got {})", model, nic_count));
  if (nic_count == 0 && nodes > 1)
    throw ConfigError(fmt::format("{}: nics must be >= 1 with more than one node (got 0)", model));
  Topology t(fmt::format("{}:{}", model, nodes));
  t.set_gpu_arch(GpuArch::Volta);               // NCCL's constants for everything before sm_80, P100 included
  t.set_host_cpu(HostCpu::Intel);               // 2 x Xeon E5-2698 v4 (DGX-1 datasheet)
  const double link_Bps = volta ? 25e9 : 20e9;  // NVLink2 / NVLink1, per link per direction
  constexpr double kPcieGen3x16_Bps = 16 * 8e9 * 128.0 / 130.0 / 8;
  // What GPU peer traffic gets across the two Broadwell sockets' QPI: NCCL's QPI_BW (src/graph/topo.h).
  constexpr double kQpi_Bps = 6e9;
  constexpr std::array<std::array<int, 2>, 8> kDoubled{
      {{0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {4, 7}, {5, 6}, {6, 7}}};
  constexpr std::array<std::array<int, 2>, 8> kSingle{
      {{0, 1}, {0, 2}, {1, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {5, 7}}};
  std::vector<std::vector<VertexId>> nics(nodes);
  for (int n = 0; n < nodes; ++n) {
    const std::string pre = node_prefix(n);
    std::vector<VertexId> gpus;
    for (int g = 0; g < 8; ++g)
      gpus.push_back(t.add_vertex(Vertex{fmt::format("{}gpu{}", pre, g), VertexKind::Gpu, n, g}));
    for (const auto& [a, b] : kSingle)
      t.add_link(gpus[a], gpus[b], LinkKind::NvLink, link_Bps, kNvLinkHopLatency_s);
    for (const auto& [a, b] : kDoubled)
      t.add_link(gpus[a], gpus[b], LinkKind::NvLink, (volta ? 2 : 1) * link_Bps, kNvLinkHopLatency_s);
    VertexId cpu0 = t.add_vertex(Vertex{pre + "cpu0", VertexKind::Cpu, n});
    VertexId cpu1 = t.add_vertex(Vertex{pre + "cpu1", VertexKind::Cpu, n});
    t.add_link(cpu0, cpu1, LinkKind::Socket, kQpi_Bps, kPcieHopLatency_s);
    for (int s = 0; s < 4; ++s) {
      VertexId sw = t.add_vertex(Vertex{fmt::format("{}pcie{}", pre, s), VertexKind::PcieSwitch, n});
      t.add_link(sw, s < 2 ? cpu0 : cpu1, LinkKind::Pcie, kPcieGen3x16_Bps, kPcieHopLatency_s);
      for (int g = 2 * s; g < 2 * s + 2; ++g)
        t.add_link(gpus[g], sw, LinkKind::Pcie, kPcieGen3x16_Bps, kPcieHopLatency_s);
      if (nic_count == 0 || s % (4 / nic_count) != 0) continue;
      VertexId nic = t.add_vertex(Vertex{fmt::format("{}nic{}", pre, s), VertexKind::Nic, n});
      t.add_link(nic, sw, LinkKind::Pcie, kPcieGen3x16_Bps, kPcieHopLatency_s);
      nics[n].push_back(nic);
    }
  }
  if (nic_count > 0) add_fabric(t, nics, nic_Bps, f);
  return t;
}

// ---- spec parsing ----

int parse_int(std::string_view text, std::string_view field, std::string_view spec) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw ConfigError(fmt::format("topology '{}': {} must be an integer (got '{}')", spec, field, text));
  }
  return value;
}

double parse_double(std::string_view text, std::string_view field, std::string_view spec) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw ConfigError(fmt::format("topology '{}': {} must be a number (got '{}')", spec, field, text));
  }
  return value;
}

// key=value pairs that remember which keys were used, so leftovers are reported as unknown.
class KeyValues {
 public:
  KeyValues(std::string_view spec, std::string_view preset, std::string_view valid)
      : spec_(spec), preset_(preset), valid_(valid) {}
  void add(std::string_view item) {
    auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw ConfigError(fmt::format("topology '{}': expected key=value, got '{}' (keys for {}: {})", spec_,
                                    item, preset_, valid_));
    }
    values_[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
  }
  const std::string* get(const std::string& key) {
    auto it = values_.find(key);
    if (it == values_.end()) return nullptr;
    used_.insert(key);
    return &it->second;
  }
  void check_all_used() const {
    for (const auto& [key, value] : values_) {
      if (!used_.count(key)) {
        throw ConfigError(fmt::format("topology '{}': unknown key '{}' for {} (valid keys: {})", spec_, key,
                                      preset_, valid_));
      }
    }
  }
  std::string_view spec() const { return spec_; }

 private:
  std::string_view spec_, preset_, valid_;
  std::map<std::string, std::string> values_;
  std::set<std::string> used_;
};

template <typename Fn>
auto with_field(std::string_view spec, std::string_view field, Fn&& fn) {
  try {
    return fn();
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("topology '{}': {}: {}", spec, field, e.what()));
  }
}

void read_fabric(KeyValues& kv, FabricParams& f) {
  if (const auto* v = kv.get("fabric")) {
    if (*v == "single")
      f.fabric = Fabric::SingleSwitch;
    else if (*v == "leaf_spine")
      f.fabric = Fabric::LeafSpine;
    else if (*v == "rail")
      f.fabric = Fabric::Rail;
    else if (*v == "fat_tree")
      f.fabric = Fabric::FatTree;
    else
      throw ConfigError(
          fmt::format("topology '{}': fabric '{}' is unknown (valid: single, leaf_spine, rail, fat_tree)",
                      kv.spec(), *v));
  }
  if (const auto* v = kv.get("oversub")) {
    f.oversubscription = parse_double(*v, "oversub", kv.spec());
    if (!(f.oversubscription >= 1.0))
      throw ConfigError(fmt::format("topology '{}': oversub must be >= 1", kv.spec()));
  }
  if (const auto* v = kv.get("leaf_size")) {
    f.nodes_per_leaf = parse_int(*v, "leaf_size", kv.spec());
    if (f.nodes_per_leaf < 1)
      throw ConfigError(fmt::format("topology '{}': leaf_size must be >= 1", kv.spec()));
  }
  if (const auto* v = kv.get("spines")) {
    f.spines = parse_int(*v, "spines", kv.spec());
    if (f.spines < 1) throw ConfigError(fmt::format("topology '{}': spines must be >= 1", kv.spec()));
  }
  if (const auto* v = kv.get("net")) {
    auto kind = parse_link_kind(*v);
    if (!kind || !is_network(*kind)) {
      throw ConfigError(
          fmt::format("topology '{}': net '{}' is unknown (valid: infiniband, ethernet or roce, tcp, efa)",
                      kv.spec(), *v));
    }
    f.link_kind = *kind;
  }
  if (const auto* v = kv.get("net_latency"))
    f.link_latency_s = with_field(kv.spec(), "net_latency", [&] { return parse_time_s(*v); });
  if (const auto* v = kv.get("k")) {
    f.fat_tree_k = parse_int(*v, "k", kv.spec());
    if (f.fat_tree_k < 2 || f.fat_tree_k % 2 != 0 || f.fat_tree_k > 2 * kMaxSpines)
      throw ConfigError(fmt::format("topology '{}': k must be even, 2 to {}", kv.spec(), 2 * kMaxSpines));
  }
  if (const auto* v = kv.get("ecmp_seed")) {
    const int seed = parse_int(*v, "ecmp_seed", kv.spec());
    if (seed < 0) throw ConfigError(fmt::format("topology '{}': ecmp_seed must be >= 0", kv.spec()));
    f.ecmp_seed = static_cast<std::uint64_t>(seed);
  }
  if (const auto* v = kv.get("sharp")) {
    if (*v != "0" && *v != "1")
      throw ConfigError(fmt::format("topology '{}': sharp must be 0 or 1", kv.spec()));
    f.sharp = *v == "1";
    if (f.sharp && f.link_kind != LinkKind::InfiniBand)
      throw ConfigError(
          fmt::format("topology '{}': sharp=1 needs an InfiniBand fabric (SHARP is a Quantum "
                      "switch feature)",
                      kv.spec()));
  }
  if (const auto* v = kv.get("neighbour")) {
    f.neighbour_nodes = parse_int(*v, "neighbour", kv.spec());
    if (f.neighbour_nodes < 0 || f.neighbour_nodes == 1)
      throw ConfigError(
          fmt::format("topology '{}': neighbour must be 0 or >= 2 servers (a ring)", kv.spec()));
  }
}

constexpr std::string_view kFabricKeys =
    "fabric=single|leaf_spine|rail|fat_tree, oversub, leaf_size, spines, k, net, net_latency, neighbour, "
    "ecmp_seed, sharp";

// Per model: GPUs and NICs per node, NVLink per GPU per direction, NIC line rate, PCIe generation.
struct NvSwitchModel {
  std::string_view name;
  std::string_view description;
  NvSwitchNode node;
};
const std::array<NvSwitchModel, 5>& nvswitch_models() {
  static const std::array<NvSwitchModel, 5> models{{
      // A100 SXM: 12 NVLink3 x 25 GB/s = 300 GB/s per direction; 8 x ConnectX-6 HDR 200 Gb/s; PCIe Gen4;
      // 2 x AMD EPYC 7742 hosts (DGX A100 user guide).
      {"dgx_a100",
       "8 x A100 on NVSwitch (300 GB/s per GPU per direction), 8 x HDR 200 Gb/s NICs behind 4 PCIe Gen4 "
       "switches",
       {8, 8, 300e9, 200e9 / 8, kPcieGen4x16_Bps, GpuArch::Ampere, HostCpu::Amd}},
      // H100 SXM: 18 NVLink4 x 25 GB/s = 450 GB/s per direction; 8 x ConnectX-7 NDR 400 Gb/s; PCIe Gen5;
      // 2 x Intel Xeon Platinum 8480C hosts (DGX H100 user guide; the DGX H200 has the same board).
      {"dgx_h100",
       "8 x H100 on NVSwitch (450 GB/s per GPU per direction), 8 x NDR 400 Gb/s NICs behind 4 PCIe Gen5 "
       "switches",
       {8, 8, 450e9, 400e9 / 8, kPcieGen5x16_Bps, GpuArch::Hopper}},
      // H200 SXM: the H100's NVLink4 (900 GB/s bidirectional) and 8 x ConnectX-7 400 Gb/s (DGX H200
      // datasheet).
      {"dgx_h200",
       "8 x H200 on NVSwitch (450 GB/s per GPU per direction), 8 x 400 Gb/s NICs, PCIe Gen5",
       {8, 8, 450e9, 400e9 / 8, kPcieGen5x16_Bps, GpuArch::Hopper}},
      // B200: 18 NVLink5 x 50 GB/s = 900 GB/s per direction (1.8 TB/s bidirectional); 8 x ConnectX-7
      // 400 Gb/s compute ports, 2 x Intel Xeon Platinum 8570 hosts (DGX B200 datasheet).
      {"dgx_b200",
       "8 x B200 on NVSwitch (NVLink5, 900 GB/s per GPU per direction), 8 x 400 Gb/s NICs, PCIe Gen5",
       {8, 8, 900e9, 400e9 / 8, kPcieGen5x16_Bps, GpuArch::Blackwell, HostCpu::Intel}},
      // GB200 NVL72: 72 B200 GPUs in one NVLink domain (NVLink5 through the rack's NVLink switch trays,
      // 900 GB/s per GPU per direction); one 400 Gb/s ConnectX-7 per GPU for the scale-out network; Grace
      // (Arm) hosts (NVIDIA GB200 NVL72 product page). A node here is a rack.
      {"gb200_nvl72",
       "a GB200 NVL72 rack per node: 72 B200 in one NVLink domain (900 GB/s per GPU per direction), "
       "one 400 Gb/s NIC per GPU",
       {72, 72, 900e9, 400e9 / 8, kPcieGen5x16_Bps, GpuArch::Blackwell, HostCpu::Arm}},
  }};
  return models;
}

const NvSwitchModel* find_nvswitch_model(std::string_view name) {
  for (const NvSwitchModel& m : nvswitch_models())
    if (m.name == name) return &m;
  return nullptr;
}

Topology nvswitch_preset(std::string_view model, const DgxParams& p) {
  const NvSwitchModel* m = find_nvswitch_model(model);
  CCLAB_ENFORCE(m != nullptr, "no NVSwitch model '{}'", model);
  NvSwitchNode node = m->node;
  if (p.gpus > 0) {
    // The model's NICs per GPU carry over (a DGX's one per GPU: gpus=4 has 4, gb200_nvl72 with gpus=4 as
    // well), at least one where the model has any; nics= overrides.
    node.nics = m->node.nics == 0 ? 0 : std::max(1, m->node.nics * p.gpus / m->node.gpus);
    node.gpus = p.gpus;
  }
  if (p.nics >= 0) node.nics = p.nics;
  if (p.nvlink_Bps > 0) node.nvlink_Bps = p.nvlink_Bps;
  if (p.nic_Bps > 0) node.nic_Bps = p.nic_Bps;
  return nvswitch_nodes(std::string(model), p.nodes, node, p.fabric);
}

}  // namespace

Topology dgx_a100(const DgxParams& params) {
  return nvswitch_preset("dgx_a100", params);
}

Topology dgx_h100(const DgxParams& params) {
  return nvswitch_preset("dgx_h100", params);
}

Topology pcie_server(const PcieServerParams& p) {
  check_preset_size("pcie_server", p.nodes, p.gpus, p.fabric);
  Topology t(fmt::format("pcie_server:{},gpus={}", p.nodes, p.gpus));
  std::vector<std::vector<VertexId>> nics(p.nodes);
  for (int n = 0; n < p.nodes; ++n) {
    const std::string pre = node_prefix(n);
    // GPUs and the NIC share one PCIe switch under the CPU, the common 4-GPU workstation/server layout.
    VertexId cpu = t.add_vertex(Vertex{pre + "cpu", VertexKind::Cpu, n});
    VertexId sw = t.add_vertex(Vertex{pre + "pcie0", VertexKind::PcieSwitch, n});
    t.add_link(sw, cpu, LinkKind::Pcie, p.pcie_Bps, kPcieHopLatency_s);
    for (int g = 0; g < p.gpus; ++g) {
      VertexId gpu = t.add_vertex(Vertex{fmt::format("{}gpu{}", pre, g), VertexKind::Gpu, n, g});
      t.add_link(gpu, sw, LinkKind::Pcie, p.pcie_Bps, kPcieHopLatency_s);
    }
    VertexId nic = t.add_vertex(Vertex{pre + "nic0", VertexKind::Nic, n});
    t.add_link(nic, sw, LinkKind::Pcie, p.pcie_Bps, kPcieHopLatency_s);
    nics[n].push_back(nic);
  }
  add_fabric(t, nics, p.nic_Bps, p.fabric);
  return t;
}

const std::vector<PresetInfo>& presets() {
  static const std::vector<PresetInfo> list = [] {
    std::vector<PresetInfo> out;
    for (const NvSwitchModel& m : nvswitch_models())
      out.push_back({std::string(m.name), std::string(m.description),
                     fmt::format("gpus, nics, nvlink, nic, {}", kFabricKeys)});
    const std::vector<PresetInfo> others{
        {"dgx1_v100",
         "DGX-1V: 8 x V100 in a hybrid cube-mesh of 24 NVLink2 links (25 GB/s each per direction, "
         "6 per GPU), 4 x EDR 100 Gb/s NICs on PCIe Gen3 (nics=1|2 for servers cabled with fewer)",
         fmt::format("nics, nic, {}", kFabricKeys)},
        {"dgx1_p100",
         "DGX-1 (Pascal): 8 x P100 in a hybrid cube-mesh of 16 NVLink1 links (20 GB/s each per "
         "direction, 4 per GPU), 4 x EDR 100 Gb/s NICs on PCIe Gen3 (nics=1|2 for fewer)",
         fmt::format("nics, nic, {}", kFabricKeys)},
        {"pcie_server",
         "N GPUs and one NIC on a PCIe switch per server (default 4 GPUs, PCIe Gen3, 25 Gb/s Ethernet)",
         fmt::format("gpus, nic, pcie, {}", kFabricKeys)},
    };
    out.insert(out.end(), others.begin(), others.end());
    return out;
  }();
  return list;
}

namespace {

Topology build_preset(std::string_view spec) {
  std::string_view rest = spec;
  auto colon = rest.find(':');
  std::string_view name = rest.substr(0, colon);
  const PresetInfo* info = nullptr;
  for (const auto& p : presets())
    if (p.name == name) info = &p;
  if (!info) {
    std::string names;
    for (const auto& p : presets())
      names += (names.empty() ? "" : ", ") + p.name;
    throw ConfigError(fmt::format("topology '{}': unknown preset '{}' (valid: {}; or a path to a YAML file)",
                                  spec, name, names));
  }
  if (colon == std::string_view::npos) {
    throw ConfigError(
        fmt::format("topology '{}': expected {}:NODES[,key=value...], e.g. {}:4", spec, name, name));
  }
  rest.remove_prefix(colon + 1);
  auto comma = rest.find(',');
  const int nodes = parse_int(rest.substr(0, comma), "NODES", spec);
  if (nodes < 1) throw ConfigError(fmt::format("topology '{}': NODES must be >= 1", spec));
  KeyValues kv(spec, name, info->keys);
  while (comma != std::string_view::npos) {
    rest.remove_prefix(comma + 1);
    comma = rest.find(',');
    kv.add(rest.substr(0, comma));
  }

  auto bandwidth = [&](const char* key, double& out) {
    if (const auto* v = kv.get(key)) out = with_field(spec, key, [&] { return parse_bandwidth_Bps(*v); });
  };
  if (name == "pcie_server") {
    PcieServerParams p;
    p.nodes = nodes;
    if (const auto* v = kv.get("gpus")) p.gpus = parse_int(*v, "gpus", spec);
    bandwidth("nic", p.nic_Bps);
    bandwidth("pcie", p.pcie_Bps);
    read_fabric(kv, p.fabric);
    kv.check_all_used();
    return pcie_server(p);
  }
  if (name == "dgx1_v100" || name == "dgx1_p100") {
    double nic_Bps = 100e9 / 8;  // EDR InfiniBand
    bandwidth("nic", nic_Bps);
    int nic_count = 4;
    if (const auto* v = kv.get("nics")) nic_count = parse_int(*v, "nics", spec);
    FabricParams fabric;
    read_fabric(kv, fabric);
    kv.check_all_used();
    return dgx1(std::string(name), nodes, name == "dgx1_v100", nic_Bps, nic_count, fabric);
  }
  DgxParams p;
  p.nodes = nodes;
  if (const auto* v = kv.get("gpus")) {
    p.gpus = parse_int(*v, "gpus", spec);
    if (p.gpus < 1) throw ConfigError(fmt::format("topology '{}': gpus must be >= 1", spec));
  }
  if (const auto* v = kv.get("nics")) {
    p.nics = parse_int(*v, "nics", spec);
    if (p.nics < 0) throw ConfigError(fmt::format("topology '{}': nics must be >= 0", spec));
  }
  bandwidth("nvlink", p.nvlink_Bps);
  bandwidth("nic", p.nic_Bps);
  read_fabric(kv, p.fabric);
  kv.check_all_used();
  return nvswitch_preset(name, p);
}

}  // namespace

Topology make_preset(std::string_view spec) {
  Topology t = build_preset(spec);
  // Named as the user wrote it, keys included: `dgx_h100:2,net=tcp` is not `dgx_h100:2`.
  t.set_name(std::string(spec));
  return t;
}

Topology load_topology(std::string_view spec_or_path) {
  const std::string text(spec_or_path);
  // A preset spec may hold '/' in a bandwidth ("dgx_a100:4,nvlink=150GB/s"); a file that starts like one can
  // still be named as ./dgx_a100:4...
  for (const auto& p : presets())
    if (text.starts_with(p.name + ":")) return make_preset(text);
  std::error_code ignored;  // a name too long for a path is simply not a file
  const bool looks_like_file = text.find('/') != std::string::npos || text.ends_with(".yaml") ||
                               text.ends_with(".yml") || std::filesystem::is_regular_file(text, ignored);
  if (looks_like_file) return load_topology_yaml_file(text);
  return make_preset(text);
}

namespace {
// Converts to the loaded topology, so that make_shared initializes its object directly from load_topology's
// result (guaranteed copy elision) instead of moving it, which would copy the graph.
struct Loaded {
  std::string_view spec;
  operator Topology() const { return load_topology(spec); }
};
}  // namespace

std::shared_ptr<const Topology> load_topology_shared(std::string_view spec_or_path) {
  return std::make_shared<const Topology>(Loaded{spec_or_path});
}

std::shared_ptr<Topology> load_topology_mutable(std::string_view spec_or_path) {
  return std::make_shared<Topology>(Loaded{spec_or_path});
}

}  // namespace cclab::topo
