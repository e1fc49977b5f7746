// cclab: the front. It runs every command that needs neither MPI nor NCCL nor LibTorch itself, and hands the
// ones that do (bench, calibrate, train) to `cclab-real` beside it, with exec: same process, same arguments,
// same environment (so it works under mpirun and srun, whose launch variables carry over).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "common/files.hpp"

namespace {

[[noreturn]] void exec_heavy(std::string_view command, int argc, char** argv) {
  const std::string path = cclab::beside_executable(cclab::cli::kHeavyExecutable);
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  execvp(path.c_str(), args.data());
  const int exec_errno = errno;
  if (exec_errno == ENOENT) {
    fmt::print(stderr,
               "cclab: error: `cclab {}` needs {}, which is not built: `cmake --build BUILD_DIR --target "
               "cclab-real` builds it (scripts/test.sh builds everything) where Open MPI is found "
               "(scripts/install-deps.sh installs it)\n",
               command, path);
  } else {
    fmt::print(stderr, "cclab: error: cannot run {} for `cclab {}`: {}\n", path, command,
               std::strerror(exec_errno));
  }
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2) {
    for (const auto& heavy : cclab::cli::kHeavyCommands) {
      if (std::string_view(argv[1]) == heavy.name) exec_heavy(heavy.name, argc, argv);
    }
  }
  const std::unique_ptr<CLI::App> app_owner = cclab::cli::make_app();
  CLI::App& app = *app_owner;
  cclab::cli::add_topology_command(app);
  cclab::cli::add_plan_command(app);
  cclab::cli::add_verify_command(app);
  cclab::cli::add_algorithms_command(app);
  cclab::cli::add_workload_command(app);
  cclab::cli::add_predict_command(app);
  cclab::cli::add_regress_command(app);
  cclab::cli::add_compare_command(app);
  cclab::cli::add_checkpoint_command(app);
#if CCLAB_HAVE_SIMGRID
  cclab::cli::add_sim_command(app);
#endif
  // Listed in --help; never parsed here (exec_heavy took them above).
  for (const auto& heavy : cclab::cli::kHeavyCommands)
    app.add_subcommand(heavy.name, heavy.summary);
  return cclab::cli::run_app(app, argc, argv);
}
