// `cclab verify FILE`: load a schedule written by `cclab plan --dump` or `--dump-explicit` (or by hand) and
// verify it. A file comes from outside the planners, so by default every op of its expansion is verified
// (within the memory budget); --patterns runs only the compact checks.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/memory.hpp"
#include "engine/check/verified.hpp"
#include "engine/ir/schedule_json.hpp"

namespace cclab::cli {

void add_verify_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto patterns = std::make_shared<bool>(false);
  auto* cmd =
      app.add_subcommand("verify", "Verify a schedule JSON file: matching, deps, deadlock, races, result");
  cmd->add_option("file", *path,
                  "schedule JSON, either form (cclab plan --dump FILE or --dump-explicit FILE)")
      ->required();
  cmd->add_flag("--patterns", *patterns,
                "only the compact checks (pass preconditions, explicit passes in full), not every op");
  cmd->callback([path, patterns] {
    CompactSchedule s = load_any_schedule_file(*path);
    const std::uint64_t ops = count_explicit_ops(s);
    const VerifiedSchedule verified =
        verify_compact(std::move(s), *patterns ? VerifyDepth::Patterns : VerifyDepth::All);
    fmt::print("OK: {} {} over {} ranks, {} ops: {}\n", verified->algorithm,
               to_string(verified->spec.collective), verified->world_size(), ops,
               *patterns ? "ring/tree/NVLSTree/SHARP/NVLS preconditions and explicit passes check out"
               : has_in_place_form(verified->spec.collective)
                   ? "matching, deps, progress, races and result check out (out-of-place and in-place)"
                   : "matching, deps, progress, races and result check out (out-of-place; the collective "
                     "has no in-place form)");
  });
}

}  // namespace cclab::cli
