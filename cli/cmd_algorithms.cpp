// `cclab algorithms`: the registry.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/plan/registry.hpp"

namespace cclab::cli {

void add_algorithms_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("algorithms", "List the planners by collective");
  cmd->callback([] {
    fmt::print("{:<16} {:<18} {}\n", "collective", "algorithm", "description");
    for (const Algorithm& a : algorithms())
      fmt::print("{:<16} {:<18} {}\n", to_string(a.collective), a.name, a.description);
  });
}

}  // namespace cclab::cli
