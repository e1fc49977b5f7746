// `cclab verify FILE`: load a schedule written by `cclab plan --dump` (or by hand) and verify it.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "engine/schedule_json.hpp"
#include "engine/verifier.hpp"

namespace cclab::cli {

void add_verify_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand("verify", "Verify a schedule JSON file: matching, deps, deadlock, races, result");
  cmd->add_option("file", *path, "schedule JSON (cclab plan --dump FILE)")->required();
  cmd->callback([path] {
    const Schedule s = load_schedule_file(*path);
    verify_or_throw(s);
    fmt::print(
        "OK: {} {} over {} ranks, {} ops: matching, deps, progress, races and result check out "
        "(out-of-place and in-place)\n",
        s.algorithm, to_string(s.spec.collective), s.world_size(), s.num_ops());
  });
}

}  // namespace cclab::cli
