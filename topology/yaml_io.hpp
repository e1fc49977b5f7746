// Topology files in YAML. Format (docs/topology-format.md):
//   name: my-cluster
//   vertices:
//     - {name: n0.gpu0, kind: gpu, node: 0, local_rank: 0}
//     - {name: switch, kind: switch}
//   links:
//     - {from: n0.gpu0, to: n0.nvswitch, kind: nvswitch, bandwidth: 300GB/s, latency: 500ns}
//   link_models:                       # optional; defaults in Topology::default_link_model()
//     infiniband: {efficiency: 0.96, overhead: 1us}
// Bandwidth is per direction. Every error names the file, the line and the field, and what would be valid.
#pragma once

#include <string>

#include "topology/topology.hpp"

namespace cclab::topo {

Topology load_topology_yaml_file(const std::string& path);
// `source` names the text in error messages (a file path, or "<string>").
Topology parse_topology_yaml(const std::string& text, const std::string& source = "<string>");
std::string dump_topology_yaml(const Topology& topology);

}  // namespace cclab::topo
