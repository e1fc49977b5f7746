// cclab-real: the commands that load MPI, NCCL or LibTorch. Users run them as `cclab bench|calibrate|train`;
// the front execs this executable with the same arguments (argv[1] is the command's name).
#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  const std::unique_ptr<CLI::App> app_owner = cclab::cli::make_app();
  CLI::App& app = *app_owner;
  cclab::cli::add_bench_command(app);
  cclab::cli::add_calibrate_command(app);
#if CCLAB_HAVE_TRAIN
  cclab::cli::add_train_command(app);
#else
  app.add_subcommand("train", "(not built: needs LibTorch)")->allow_extras()->callback([] {
    throw cclab::ConfigError(
        "`cclab train` is not in this build: LibTorch was not found when cclab was configured "
        "(scripts/install-deps.sh installs it; then configure and build again)");
  });
#endif
  return cclab::cli::run_app(app, argc, argv);
}
