// `cclab algorithms`: the registry, from the planners' descriptors (engine/plan/algorithm.hpp): name,
// NCCL_ALGO name, description; with --topology, whether each applies there and on how many channels, or why
// not.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/plan/registry.hpp"
#include "topology/presets.hpp"

namespace cclab::cli {

void add_algorithms_command(CLI::App& app) {
  auto topology = std::make_shared<std::string>();
  auto markdown = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("algorithms", "List the planners by collective");
  cmd->add_option("--topology", *topology,
                  "also say, for this preset or YAML file, whether each applies (and its default channels) "
                  "or why not");
  cmd->add_flag("--markdown", *markdown,
                "the list as a markdown table (docs/algorithm-table.md is this output)");
  cmd->callback([topology, markdown] {
    if (*markdown) {
      fmt::print(
          "# Algorithms\n\n<!-- Written by `cclab algorithms --markdown` from the planners' descriptors; "
          "do not edit by hand. -->\n\n| collective | algorithm | NCCL_ALGO | description |\n"
          "|---|---|---|---|\n");
      for (const Algorithm& a : algorithms())
        fmt::print("| {} | `{}` | {} | {} |\n", to_string(a.collective), a.name,
                   a.nccl_p2p ? "(grouped send/receive)"
                   : a.nccl   ? std::string(a.nccl_name())
                              : "-",
                   a.description);
      return;
    }
    std::optional<topo::Topology> t;
    if (!topology->empty()) t = topo::load_topology(*topology);
    fmt::print("{:<16} {:<18} {:<14} {}\n", "collective", "algorithm", "NCCL_ALGO",
               t ? "here" : "description");
    for (const Algorithm& a : algorithms()) {
      const std::string nccl = a.nccl_p2p ? "(p2p)" : a.nccl ? std::string(a.nccl_name()) : "-";
      std::string last = a.description;
      if (t) {
        // A probe of 64 elements per rank: what applies depends on the topology (and an alltoall's blocks).
        const CollectiveSpec spec = spec_for(*t, a.collective, 64ULL * t->gpus().size(), DType::F32);
        const Support s = a.supports(spec, *t, PlanOptions{});
        const int channels = s.ok ? a.default_channels(spec, *t) : 0;
        last = s.ok ? fmt::format("yes, {} channel{} by default", channels, channels == 1 ? "" : "s")
                    : fmt::format("no: {}", s.reason);
      }
      fmt::print("{:<16} {:<18} {:<14} {}\n", to_string(a.collective), a.name, nccl, last);
    }
    fmt::print(
        "\n--algo takes a name above, auto (the cheapest of all by cclab's model), nccl (what NCCL's "
        "own tuning model picks among its algorithms), or an NCCL_ALGO value (any case).\n");
  });
}

}  // namespace cclab::cli
