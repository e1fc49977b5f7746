// `cclab checkpoint show PATH...`: validates training checkpoints (magic, lengths, CRC-32) and prints their
// metadata — what `cclab train --resume` would accept, without starting MPI or Torch. Exit status 1 when any
// file is refused.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "real/train/checkpoint.hpp"

namespace cclab::cli {

void add_checkpoint_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("checkpoint", "Inspect training checkpoints");
  cmd->require_subcommand(1);
  auto paths = std::make_shared<std::vector<std::string>>();
  auto* show =
      cmd->add_subcommand("show", "Validate checkpoint files (or a directory's newest) and print them");
  show->add_option("PATH", *paths, "checkpoint file or directory")->required();
  show->callback([paths] {
    int refused = 0;
    for (const std::string& path : *paths) {
      try {
        std::string resolved;
        const real::train::Checkpoint c = real::train::read_checkpoint(path, &resolved);
        fmt::print("{}: OK ({} bytes of state) {}\n", resolved, c.payload.size(), c.metadata.dump());
      } catch (const ConfigError& e) {
        fmt::print(stderr, "cclab: error: {}\n", e.what());
        ++refused;
      }
    }
    if (refused) throw ExitStatus{1};
  });
}

}  // namespace cclab::cli
