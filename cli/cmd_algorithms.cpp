// `cclab algorithms`: the registry, with the NCCL_ALGO name of each algorithm NCCL runs.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/plan/registry.hpp"

namespace cclab::cli {

void add_algorithms_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("algorithms", "List the planners by collective");
  cmd->callback([] {
    fmt::print("{:<16} {:<18} {:<14} {}\n", "collective", "algorithm", "NCCL_ALGO", "description");
    for (const Algorithm& a : algorithms())
      fmt::print("{:<16} {:<18} {:<14} {}\n", to_string(a.collective), a.name,
                 a.nccl_p2p       ? "(p2p)"
                 : a.nccl.empty() ? "-"
                                  : a.nccl,
                 a.description);
    fmt::print(
        "\n--algo takes a name above, auto (the cheapest of all by cclab's model), nccl (what NCCL's "
        "own tuning model picks among its algorithms), or an NCCL_ALGO value (any case).\n");
  });
}

}  // namespace cclab::cli
