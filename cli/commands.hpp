// Each `cclab` subcommand lives in its own file and registers itself on the app.
#pragma once

#include <CLI/CLI.hpp>

namespace cclab::cli {

// Thrown by a subcommand that has printed its outcome and only needs the process to exit with `code`.
struct ExitStatus {
  int code;
};

void add_topology_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_algorithms_command(CLI::App& app);
void add_workload_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_regress_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_sim_command(CLI::App& app);        // only when built with SimGrid
void add_bench_command(CLI::App& app);      // only when built with MPI
void add_calibrate_command(CLI::App& app);  // only when built with MPI
void add_train_command(CLI::App& app);      // only when built with MPI and LibTorch
void add_checkpoint_command(CLI::App& app);

// The built-in default: 32 DGX A100 nodes = 256 GPUs on one HDR InfiniBand switch.
inline constexpr const char* kDefaultTopology = "dgx_a100:32";

}  // namespace cclab::cli
