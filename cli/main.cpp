// cclab: plan, verify, cost and (in later subcommands) simulate and run collective schedules.
#include <cstdio>
#include <exception>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "cclab: a collective communication lab. One engine plans collective schedules over a topology "
      "graph; the same schedules are verified, costed, simulated and run."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cclab 0.1.0");
  cclab::cli::add_topology_command(app);
  cclab::cli::add_plan_command(app);
  cclab::cli::add_verify_command(app);
  cclab::cli::add_algorithms_command(app);
  cclab::cli::add_workload_command(app);
  cclab::cli::add_predict_command(app);
  cclab::cli::add_regress_command(app);
  cclab::cli::add_checkpoint_command(app);
#if CCLAB_HAVE_SIMGRID
  cclab::cli::add_sim_command(app);
#endif
#if CCLAB_HAVE_MPI
  cclab::cli::add_bench_command(app);
  cclab::cli::add_calibrate_command(app);
#endif
#if CCLAB_HAVE_TRAIN
  cclab::cli::add_train_command(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const cclab::cli::ExitStatus& e) {
    return e.code;
  } catch (const cclab::Error& e) {
    fmt::print(stderr, "cclab: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "cclab: unexpected error: {}\n", e.what());
    return 2;
  }
  return 0;
}
