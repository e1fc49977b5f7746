// `cclab topology show|nccl|dot|dump TOPO`: inspect a preset or a topology file.
#include <algorithm>
#include <array>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/model/nccl_tuning.hpp"
#include "engine/plan/ring_search.hpp"
#include "topology/presets.hpp"
#include "topology/yaml_io.hpp"

namespace cclab::cli {
namespace {

void write_output(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path);
  if (!out || !(out << text)) throw ConfigError(fmt::format("{}: cannot write", path));
}

void show(const topo::Topology& t) {
  std::map<std::string, int> vertices;
  for (topo::VertexId v = 0; v < t.num_vertices(); ++v)
    ++vertices[std::string(to_string(t.vertex(v).kind))];
  fmt::print("topology {}: {} nodes, {} GPUs, {} vertices, {} links\n", t.name(), t.num_nodes(),
             t.gpus().size(), t.num_vertices(), t.num_links());
  for (const auto& [kind, n] : vertices)
    fmt::print("  {:<12} {}\n", kind, n);
  std::map<std::pair<std::string, double>, int> links;
  for (const auto& l : t.links())
    ++links[{std::string(to_string(l.kind)), l.bandwidth_Bps}];
  fmt::print("links (bandwidth per direction):\n");
  for (const auto& [key, n] : links)
    fmt::print("  {:<12} {:>10}  x{}\n", key.first, format_bandwidth(key.second), n);
  if (t.gpus().size() >= 2) {
    fmt::print("routes:\n");
    auto print_route = [&](int a, int b) {
      const auto r = t.route_between_ranks(a, b);
      std::string path = t.vertex(t.gpus()[a]).name;
      for (const auto& h : r.hops) {
        const auto& l = t.link(h.link);
        path += " > " + t.vertex(h.forward ? l.b : l.a).name;
      }
      fmt::print("  rank {} -> {}: {} ({} hops, latency {}, bottleneck {})\n", a, b, path, r.hops.size(),
                 format_time(r.latency_s), format_bandwidth(r.bottleneck_bandwidth_Bps));
    };
    print_route(0, 1);
    const int last = static_cast<int>(t.gpus().size()) - 1;
    if (last > 1) print_route(0, last);
  }
}

// The communicator as NCCL's tuning model sees it on this topology: the graphs cclab reproduces from NCCL's
// search, and NCCL's table in the layout NCCL prints under NCCL_DEBUG_SUBSYS=TUNING (blocks of three
// algorithms, latency in µs / algorithm bandwidth in GB/s per protocol), to set beside a real run's log.
void show_nccl(const topo::Topology& t) {
  const planners::NcclSearch search = planners::nccl_search(t);
  if (!search.comm)
    throw ConfigError(fmt::format("{}: cclab cannot reproduce NCCL's graphs: {}", t.name(), search.why_not));
  const NcclComm& c = *search.comm;
  fmt::print(
      "NCCL's graphs on {} ({} node{}, {} ranks, {}, {} host, {} inside a node), as cclab reproduces its "
      "search (NCCL 2.30):\n",
      t.name(), c.nodes, c.nodes == 1 ? "" : "s", c.ranks, topo::to_string(c.arch),
      c.host ? topo::to_string(*c.host) : "unknown", c.nvlink ? "NVLink" : "PCIe");
  for (int a = 0; a < kNcclAlgoCount; ++a) {
    const NcclGraph& g = c.graphs[a];
    const auto algo = static_cast<NcclAlgo>(a);
    if (g.channels == 0) {
      fmt::print("  {:<14} none{}\n", nccl_algo_name(algo),
                 algo == NcclAlgo::CollNetDirect || algo == NcclAlgo::CollNetChain
                     ? " (CollNet graphs are not reproduced)"
                     : "");
      continue;
    }
    fmt::print("  {:<14} {:>2} channels, bwIntra {:5.1f} GB/s, bwInter {:5.1f} GB/s\n", nccl_algo_name(algo),
               g.channels, g.bw_intra_GBps, g.bw_inter_GBps);
  }
  const NcclTuningModel model(c);
  constexpr std::array<std::pair<Collective, std::string_view>, 5> kFunctions = {
      {{Collective::Broadcast, "Broadcast"},
       {Collective::Reduce, "Reduce"},
       {Collective::AllGather, "AllGather"},
       {Collective::ReduceScatter, "ReduceScatter"},
       {Collective::AllReduce, "AllReduce"}}};
  fmt::print("NCCL's tuning table (latency us / bandwidth GB/s; 0.0/0.0: off):\n");
  for (int block = 0; block < kNcclAlgoCount; block += 3) {
    const int end = std::min(kNcclAlgoCount, block + 3);
    std::string algos = "  Algorithm   |", protocols = "  Protocol    |";
    for (int a = block; a < end; ++a) {
      algos += fmt::format(" {:^48} |", nccl_algo_name(static_cast<NcclAlgo>(a)));
      for (const Protocol p : kNcclProtocols)
        protocols += fmt::format(" {:>14} |", nccl_protocol_name(p));
    }
    fmt::print("{}\n{}\n", algos, protocols);
    for (const auto& [collective, name] : kFunctions) {
      std::string row = fmt::format("{:>13} |", name);
      for (int a = block; a < end; ++a)
        for (const Protocol p : kNcclProtocols) {
          const NcclTuningEntry e = model.entry(collective, static_cast<NcclAlgo>(a), p);
          row += e.bandwidth_GBps > 0 ? fmt::format("{:8.1f}/{:6.1f} |", e.latency_us, e.bandwidth_GBps)
                                      : fmt::format("{:8.1f}/{:6.1f} |", 0.0, 0.0);
        }
      fmt::print("{}\n", row);
    }
  }
}

}  // namespace

void add_topology_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("topology", "Inspect a topology: a preset NAME:NODES[,key=value...] or a YAML file");
  cmd->require_subcommand(1);
  struct Args {
    std::string topology = kDefaultTopology;
    std::string output;
  };
  auto args = std::make_shared<Args>();
  auto add = [&](const char* name, const char* help, auto action) {
    auto* sub = cmd->add_subcommand(name, help);
    sub->add_option("topology", args->topology,
                    "preset spec (dgx_a100:4, pcie_server:2,gpus=4,...) or YAML path")
        ->capture_default_str();
    if (std::string(name) != "show" && std::string(name) != "nccl")
      sub->add_option("-o,--output", args->output, "write to FILE (default: stdout)");
    sub->callback([args, action] { action(topo::load_topology(args->topology), args->output); });
  };
  add("show", "Summarise vertices, links and sample routes",
      [](const topo::Topology& t, const std::string&) { show(t); });
  add("dot", "Graphviz DOT of the graph", [](const topo::Topology& t, const std::string& out) {
    std::ostringstream text;
    t.write_dot(text);
    write_output(text.str(), out);
  });
  add("nccl",
      "NCCL's view: the graphs cclab reproduces from NCCL's search and NCCL's tuning table, in the layout "
      "NCCL_DEBUG_SUBSYS=TUNING prints",
      [](const topo::Topology& t, const std::string&) { show_nccl(t); });
  add("dump", "YAML that `--topology FILE` loads back", [](const topo::Topology& t, const std::string& out) {
    write_output(topo::dump_topology_yaml(t), out);
  });
  std::string presets = "presets:";
  for (const auto& p : topo::presets())
    presets += fmt::format("\n  {}: {} (keys: {})", p.name, p.description, p.keys);
  cmd->footer(presets);
}

}  // namespace cclab::cli
