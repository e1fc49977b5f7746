#include "topology/presets.hpp"

#include <charconv>
#include <filesystem>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/units.hpp"
#include "topology/yaml_io.hpp"

namespace cclab::topo {
namespace {

// Per-hop latencies of the built-in models. They are defaults to calibrate (cclab calibrate), chosen so that
// end-to-end figures land near published ones: about 1 us GPU to GPU through NVSwitch, about 2-3 us GPU to
// GPU across an InfiniBand switch (NCCL's tuning model uses 0.6-4 us NVLink and 5-14 us NET hardware
// latencies per step, which include protocol overheads the network model adds separately).
constexpr double kNvLinkHopLatency_s = 0.5e-6;
constexpr double kPcieHopLatency_s = 0.4e-6;

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

// Joins the NICs of all nodes (nics[node][i]) with the fabric. Returns nothing: the topology is extended in
// place.
void add_fabric(Topology& t, const std::vector<std::vector<VertexId>>& nics, double nic_Bps,
                const FabricParams& f) {
  const int nodes = static_cast<int>(nics.size());
  const int per_node = nics.empty() ? 0 : static_cast<int>(nics[0].size());
  switch (f.fabric) {
    case Fabric::SingleSwitch: {
      VertexId sw = t.add_vertex(Vertex{"switch", VertexKind::Switch});
      for (const auto& node : nics)
        for (VertexId nic : node)
          t.add_link(nic, sw, f.link_kind, nic_Bps, f.link_latency_s);
      return;
    }
    case Fabric::LeafSpine: {
      // Each leaf has nodes_per_leaf x per_node down-links; its up-link capacity is that divided by oversub,
      // spread evenly over the spines.
      const int leaves = (nodes + f.nodes_per_leaf - 1) / f.nodes_per_leaf;
      const double uplink_Bps = f.nodes_per_leaf * per_node * nic_Bps / f.oversubscription / f.spines;
      std::vector<VertexId> spines;
      for (int s = 0; s < f.spines; ++s)
        spines.push_back(t.add_vertex(Vertex{fmt::format("spine{}", s), VertexKind::Switch}));
      for (int l = 0; l < leaves; ++l) {
        VertexId leaf = t.add_vertex(Vertex{fmt::format("leaf{}", l), VertexKind::Switch});
        for (VertexId spine : spines)
          t.add_link(leaf, spine, f.link_kind, uplink_Bps, f.link_latency_s);
        for (int n = l * f.nodes_per_leaf; n < std::min(nodes, (l + 1) * f.nodes_per_leaf); ++n)
          for (VertexId nic : nics[n])
            t.add_link(nic, leaf, f.link_kind, nic_Bps, f.link_latency_s);
      }
      return;
    }
    case Fabric::Rail: {
      // NIC i of every node on rail switch i; one spine joins the rails for cross-rail traffic.
      VertexId spine = t.add_vertex(Vertex{"rail-spine", VertexKind::Switch});
      const double uplink_Bps = nodes * nic_Bps / f.oversubscription;
      for (int i = 0; i < per_node; ++i) {
        VertexId rail = t.add_vertex(Vertex{fmt::format("rail{}", i), VertexKind::Switch});
        t.add_link(rail, spine, f.link_kind, uplink_Bps, f.link_latency_s);
        for (int n = 0; n < nodes; ++n)
          t.add_link(nics[n][i], rail, f.link_kind, nic_Bps, f.link_latency_s);
      }
      return;
    }
  }
}

// DGX A100 and H100 share a layout: 8 GPUs on NVSwitch; 4 PCIe switches each holding 2 GPUs and 2 compute
// NICs; the host CPU above the PCIe switches. (NVIDIA DGX A100 and DGX H100 user guides, system topology
// chapters.)
Topology dgx(const std::string& model, const DgxParams& p, double nvlink_Bps, double nic_Bps,
             double pcie_Bps) {
  check_preset_size(model, p.nodes, 8, p.fabric);
  Topology t(fmt::format("{}:{}", model, p.nodes));
  if (p.nvlink_Bps > 0) nvlink_Bps = p.nvlink_Bps;
  if (p.nic_Bps > 0) nic_Bps = p.nic_Bps;
  std::vector<std::vector<VertexId>> nics(p.nodes);
  for (int n = 0; n < p.nodes; ++n) {
    const std::string pre = node_prefix(n);
    std::vector<VertexId> gpus;
    for (int g = 0; g < 8; ++g)
      gpus.push_back(t.add_vertex(Vertex{fmt::format("{}gpu{}", pre, g), VertexKind::Gpu, n, g}));
    VertexId nvs = t.add_vertex(Vertex{pre + "nvswitch", VertexKind::NvSwitch, n});
    VertexId cpu = t.add_vertex(Vertex{pre + "cpu", VertexKind::Cpu, n});
    for (int g = 0; g < 8; ++g)
      t.add_link(gpus[g], nvs, LinkKind::NvSwitch, nvlink_Bps, kNvLinkHopLatency_s);
    for (int s = 0; s < 4; ++s) {
      VertexId sw = t.add_vertex(Vertex{fmt::format("{}pcie{}", pre, s), VertexKind::PcieSwitch, n});
      t.add_link(sw, cpu, LinkKind::Pcie, pcie_Bps, kPcieHopLatency_s);
      for (int k = 0; k < 2; ++k) {
        const int i = 2 * s + k;
        t.add_link(gpus[i], sw, LinkKind::Pcie, pcie_Bps, kPcieHopLatency_s);
        VertexId nic = t.add_vertex(Vertex{fmt::format("{}nic{}", pre, i), VertexKind::Nic, n});
        t.add_link(nic, sw, LinkKind::Pcie, pcie_Bps, kPcieHopLatency_s);
        nics[n].push_back(nic);
      }
    }
  }
  add_fabric(t, nics, nic_Bps, p.fabric);
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
    else
      throw ConfigError(fmt::format("topology '{}': fabric '{}' is unknown (valid: single, leaf_spine, rail)",
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
    if (!kind || (*kind != LinkKind::InfiniBand && *kind != LinkKind::Ethernet)) {
      throw ConfigError(fmt::format("topology '{}': net '{}' is unknown (valid: infiniband, ethernet, roce)",
                                    kv.spec(), *v));
    }
    f.link_kind = *kind;
  }
  if (const auto* v = kv.get("net_latency"))
    f.link_latency_s = with_field(kv.spec(), "net_latency", [&] { return parse_time_s(*v); });
}

constexpr std::string_view kFabricKeys =
    "fabric=single|leaf_spine|rail, oversub, leaf_size, spines, net, net_latency";

}  // namespace

Topology dgx_a100(const DgxParams& params) {
  // A100 SXM: 12 NVLink3 links x 25 GB/s = 300 GB/s per direction. 8 x ConnectX-6 HDR 200 Gb/s. PCIe Gen4.
  return dgx("dgx_a100", params, 300e9, 200e9 / 8, kPcieGen4x16_Bps);
}

Topology dgx_h100(const DgxParams& params) {
  // H100 SXM: 18 NVLink4 links x 25 GB/s = 450 GB/s per direction. 8 x ConnectX-7 NDR 400 Gb/s. PCIe Gen5.
  return dgx("dgx_h100", params, 450e9, 400e9 / 8, kPcieGen5x16_Bps);
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
  static const std::vector<PresetInfo> list{
      {"dgx_a100",
       "8 x A100 on NVSwitch (300 GB/s per GPU per direction), 8 x HDR 200 Gb/s NICs behind 4 PCIe Gen4 "
       "switches",
       fmt::format("nvlink, nic, {}", kFabricKeys)},
      {"dgx_h100",
       "8 x H100 on NVSwitch (450 GB/s per GPU per direction), 8 x NDR 400 Gb/s NICs behind 4 PCIe Gen5 "
       "switches",
       fmt::format("nvlink, nic, {}", kFabricKeys)},
      {"pcie_server",
       "N GPUs and one NIC on a PCIe switch per server (default 4 GPUs, PCIe Gen3, 25 Gb/s Ethernet)",
       fmt::format("gpus, nic, pcie, {}", kFabricKeys)},
  };
  return list;
}

Topology make_preset(std::string_view spec) {
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
  DgxParams p;
  p.nodes = nodes;
  bandwidth("nvlink", p.nvlink_Bps);
  bandwidth("nic", p.nic_Bps);
  read_fabric(kv, p.fabric);
  kv.check_all_used();
  return name == "dgx_a100" ? dgx_a100(p) : dgx_h100(p);
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
