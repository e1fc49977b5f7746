// `cclab bench`: parses nccl-tests-style options and runs the harness (real/bench/harness.hpp) under MPI.
#include <memory>

#include "cli/commands.hpp"
#include "cli/transports.hpp"
#include "real/bench/harness.hpp"
#include "real/transports.hpp"
#if CCLAB_HAVE_SIMGRID
#include "sim/timer.hpp"
#endif

namespace cclab::cli {

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<real::BenchOptions>();
  auto* cmd = app.add_subcommand(
      "bench", "nccl-tests-style benchmark under mpirun/srun: engine schedules vs MPI's own collectives");
  cmd->add_option("-b,--minbytes", args->min_bytes, "smallest size")->capture_default_str();
  cmd->add_option("-e,--maxbytes", args->max_bytes, "largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", args->factor, "size multiplier between points")->capture_default_str();
  cmd->add_option("-n,--iters", args->iters, "timed runs per point")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("-w,--warmup_iters", args->warmup, "untimed runs first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("-c,--check", args->check, "check results (0/1)")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  cmd->add_option("-d,--datatype", args->dtype, "float, half, bfloat16")->capture_default_str();
  cmd->add_option("-o,--op", args->op, "sum, avg, min, max")->capture_default_str();
  cmd->add_option("-r,--root", args->root, "root of broadcast, reduce, gather and scatter")
      ->capture_default_str();
  cmd->add_option("--collective", args->collective, std::string(kCollectiveNames))->capture_default_str();
  cmd->add_option("--algo", args->algorithms,
                  "engine algorithms and/or native ones (mpi, gloo); all = every one")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--topology", args->topology,
                  "how the ranks are connected, for planning (default: one node per host, from MPI)");
  cmd->add_option("--predict", args->predict,
                  "also predict each schedule on this topology (SimGrid, else α-β) and print the error");
  cmd->add_option("--chunk", args->chunk, "pipeline chunk of the schedules")->capture_default_str();
  cmd->add_option("--channels", args->channels, "channels (0: the planner's default)")->capture_default_str();
  cmd->add_option("--transport", args->transport,
                  std::string(real::kTransportHelp) + " (natives: mpi and gloo on mpi, nccl on nccl)")
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "seconds without progress before a rank gives up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option(
      "-J,--output_file", args->json,
      "also write the out-of-place rows in nccl-tests' JSON schema, with each point's min/p50/p99 run "
      "time (one --algo)");
  cmd->add_option("--csv", args->csv, "also write the rows as CSV, with min/p50/p99 run times (one --algo)");
  cmd->callback([args] {
#if CCLAB_HAVE_SIMGRID
    args->simulate = sim::schedule_timer();
#endif
    run_under_mpi([&](real::MpiWorld& world) { return real::run_bench(*args, world); });
  });
}

}  // namespace cclab::cli
