// Built-in cluster shapes, as functions of their parameters. On the command line a topology is either a
// preset spec `NAME:NODES[,key=value...]` (e.g. `dgx_a100:32`,
// `pcie_server:4,gpus=4,nic=25Gbps,fabric=leaf_spine,oversub=2`) or a path to a YAML file
// (topology/yaml_io.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topology/topology.hpp"

namespace cclab::topo {

enum class Fabric { SingleSwitch, LeafSpine, Rail, FatTree };

// The largest world a preset builds (64 Ki GPUs, well past the 1,000+ GPU clusters cclab studies): a typo
// such as `dgx_a100:3200000` ends in an error instead of minutes of graph building and gigabytes of memory.
inline constexpr long kMaxPresetGpus = 65536;
inline constexpr int kMaxSpines = 1024;

// How nodes are joined. Defaults are a non-blocking fabric.
struct FabricParams {
  Fabric fabric = Fabric::SingleSwitch;
  double oversubscription = 1.0;  // leaf down-link bandwidth / up-link bandwidth (leaf_spine and rail spine)
  int nodes_per_leaf = 4;         // leaf_spine: servers under one leaf switch
  int spines = 2;                 // leaf_spine: spine switches
  // fat_tree: the k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation
  // switches, (k/2)^2 core switches, k/2 servers under each edge switch (all of a server's NICs on it).
  int fat_tree_k = 4;
  LinkKind link_kind = LinkKind::InfiniBand;
  double link_latency_s = 0.6e-6;  // NIC port to switch port, including cable and half a switch traversal
  // A neighbour job on the same fabric (`neighbour=N`): N more servers with the job's NICs in spare ports of
  // the job's switches (leaf-spine: neighbour k under leaf k mod leaves; rail: more ports on every rail; the
  // up-links stay sized for the job), running a ring allreduce at full speed the whole time: NIC i of
  // neighbour server k sends to NIC i of server k+1 (background flows, topology.hpp). Their GPUs and NVLink
  // are not modelled (vertices nb<k>.nic<i>, no node index).
  int neighbour_nodes = 0;
  std::uint64_t ecmp_seed = 0;  // `ecmp_seed=`: Topology::set_ecmp_seed
  bool sharp = false;           // `sharp=1`: the fabric's switches reduce in the network (InfiniBand SHARP)
};

inline FabricParams ethernet_fabric() {
  FabricParams f;
  f.link_kind = LinkKind::Ethernet;
  return f;
}

// The NVSwitch family (dgx_a100, dgx_h100, dgx_h200, dgx_b200, gb200_nvl72); 0 (or -1) keeps the model's
// value.
struct DgxParams {
  int nodes = 1;
  int gpus = 0;           // per node (an HGX board with 4, a partial rack)
  int nics = -1;          // per node; 0 only for one node
  double nvlink_Bps = 0;  // per GPU per direction
  double nic_Bps = 0;     // per NIC per direction
  FabricParams fabric;
};

struct PcieServerParams {
  int nodes = 1;
  int gpus = 4;
  double nic_Bps = 25e9 / 8;  // one 25 Gb/s NIC per server
  double pcie_Bps = 15.75e9;  // PCIe Gen3 x16 per direction: 8 GT/s x 16 lanes x 128/130
  FabricParams fabric = ethernet_fabric();
};

Topology dgx_a100(const DgxParams& params);
Topology dgx_h100(const DgxParams& params);
Topology pcie_server(const PcieServerParams& params);

struct PresetInfo {
  std::string name;
  std::string description;
  std::string keys;  // accepted key=value keys
};
const std::vector<PresetInfo>& presets();

// Builds a preset from `NAME:NODES[,key=value...]`. Throws ConfigError naming the bad part and the valid
// choices.
Topology make_preset(std::string_view spec);

// A preset spec or a YAML file path (anything containing '/' or ending in .yaml/.yml, or an existing file).
Topology load_topology(std::string_view spec_or_path);
// The same, built in place on the heap and shareable. (Boost.Graph's adjacency_list has no move constructor:
// moving a Topology copies its graph, so long-lived topologies are built where they stay.)
std::shared_ptr<const Topology> load_topology_shared(std::string_view spec_or_path);
// The same, to modify before sharing (what-if faults).
std::shared_ptr<Topology> load_topology_mutable(std::string_view spec_or_path);

}  // namespace cclab::topo
