// `cclab train` (under mpirun or srun): data-parallel training of a LibTorch model on the engine's
// collectives — per-step metrics, checkpoints and resume, CSV / timeline / MLflow outputs, and under
// --validate the verdicts that make the numbers trustworthy (replicas bitwise identical every step, a match
// with a single-process reference, predicted vs measured time per bucket). See real/train/train.hpp.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/transports.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/model/cost.hpp"
#include "real/mpi/transport.hpp"
#include "real/train/train.hpp"
#include "real/transports.hpp"
#if CCLAB_HAVE_SIMGRID
#include "sim/simulator.hpp"
#endif

namespace cclab::cli {
namespace {

struct TrainArgs {
  real::TrainOptions options;
  std::string bucket = "1MiB";
  std::string first_bucket = "256KiB";
};

// The same schedule's time on the calibrated topology; the reduction throughput is what this machine
// measured. Ranks on CPUs (the MPI transport) are one core each, which copies what it receives and reduces it
// one after the other: the α-β model's one-core-per-rank walk. On GPUs (NCCL), SimGrid when built with it,
// else the α-β model.
double predict_seconds(const CompactSchedule& schedule, const topo::Topology& topology, double reduce_Bps,
                       bool on_cpus) {
  CostParams cost = cpu_rank_costs(reduce_Bps);
  if (on_cpus) return estimate_compact_cost(schedule, topology, cost).total_s;
  cost.one_core_per_rank = false;
#if CCLAB_HAVE_SIMGRID
  sim::SimParams params;
  params.compute = cost;
  return sim::simulate(to_explicit(schedule), topology, params).total_s;
#else
  return estimate_compact_cost(schedule, topology, cost).total_s;
#endif
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  real::TrainOptions& o = args->options;
  auto* cmd = app.add_subcommand("train",
                                 "Data-parallel LibTorch training on the engine's collectives, under "
                                 "mpirun/srun (--validate checks it)");
  cmd->add_option("--model", o.model, "mlp or resnet-tiny")->capture_default_str();
  cmd->add_option("--steps", o.steps, "train up to this step")->capture_default_str();
  cmd->add_option("--batch", o.batch, "samples per rank per step")->capture_default_str();
  cmd->add_option("--dataset", o.dataset, "synthetic samples (seeded, generated in-process)")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of data, shuffling and initial weights")->capture_default_str();
  cmd->add_option("--lr", o.lr, "learning rate per rank (scaled by the world size)")->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "steps of linear learning-rate warm-up")->capture_default_str();
  cmd->add_option("--momentum", o.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--clip", o.clip, "max gradient norm (0: no clipping)")->capture_default_str();
  cmd->add_option("--algo", o.algo,
                  "allreduce algorithm of the engine, or auto (α-β cheapest per bucket), nccl (NCCL's own "
                  "only) or an NCCL_ALGO value")
      ->capture_default_str();
  cmd->add_option("--fusion", o.fusion, "ddp (first bucket, then buckets) or horovod (one threshold)")
      ->capture_default_str();
  cmd->add_option("--bucket", args->bucket, "bucket size (ddp) / fusion threshold (horovod)")
      ->capture_default_str();
  cmd->add_option("--first-bucket", args->first_bucket, "ddp: size of the first bucket")
      ->capture_default_str();
  cmd->add_flag("--fp16", o.fp16, "allreduce gradients in fp16 (half the bytes, plus the casts)");
  cmd->add_option("--transport", o.transport, real::kTransportHelp)->capture_default_str();
  cmd->add_option("--topology", o.topology, "how the ranks are connected, for planning (default: from MPI)");
  cmd->add_option("--timeout", o.timeout_s, "seconds without progress before a rank gives up")
      ->capture_default_str();
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "where rank 0 writes checkpoints");
  cmd->add_option("--checkpoint-every", o.checkpoint_every, "steps between checkpoints (0: none)")
      ->capture_default_str();
  cmd->add_option("--keep", o.keep, "checkpoints kept")->capture_default_str();
  cmd->add_option("--resume", o.resume, "checkpoint file, or directory (its newest checkpoint)");
  cmd->add_option("--csv", o.csv, "write every step's metrics as CSV");
  cmd->add_option("--timeline", o.timeline, "write a Chrome trace of steps and bucket allreduces");
  cmd->add_option("--mlflow", o.mlflow, "log the run into an MLflow file store (e.g. mlruns)");
  cmd->add_flag("--validate", o.validate,
                "check replicas bitwise every step, match a single-process reference, predict each bucket");
  cmd->add_option("--reference-steps", o.reference_steps, "steps the reference retrains")
      ->capture_default_str();
  cmd->add_option("--calibration", o.calibration,
                  "topology from `cclab calibrate` for the predictions (default: calibrate in-process)");
  cmd->add_flag("--compare-gloo", o.compare_gloo,
                "train again with torch c10d Gloo allreduce on the same batches and compare samples/s");
  cmd->add_flag("--quiet", o.quiet, "no per-step lines");
  cmd->callback([args] {
    args->options.bucket_bytes = parse_size_bytes(args->bucket);
    args->options.first_bucket_bytes = parse_size_bytes(args->first_bucket);
    run_under_mpi([&](real::MpiWorld& world) {
      const std::unique_ptr<Transport> transport = real::make_transport(args->options.transport, world);
      const bool on_cpus = args->options.transport != "nccl";
      return real::run_training(
          args->options, world, *transport,
          [on_cpus](const CompactSchedule& s, const topo::Topology& t, double reduce_Bps) {
            return predict_seconds(s, t, reduce_Bps, on_cpus);
          });
    });
  });
}

}  // namespace cclab::cli
