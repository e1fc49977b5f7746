// What-if faults of a scenario (the `faults:` section, docs/scenario-format.md): degraded links, failed
// links, stragglers and lost nodes (elastic shrink with checkpoint recovery).
//
// Degraded links: bandwidth x factor and extra latency on the links chosen by kind ("infiniband"), by name
// ("node0/nic0-leaf0", the endpoints' names as `cclab topology show` lists them), or as a random fraction of
// all inter-node links with a seed (reproducible). Routing sees the degraded links, so least-cost paths may
// move around them, as adaptive routing would.
//
// Failed links: chosen the same ways; they carry nothing, traffic takes the remaining least-cost paths, and a
// failure that leaves two GPUs without a path is an error naming them ("partitioned").
//
// Stragglers: GPUs whose compute takes `factor` times as long (thermal throttling, a noisy neighbour, a
// slower part). In synchronous data parallelism every bucket's allreduce waits for the last rank to produce
// its gradients, so the slowest GPU sets the pace of the whole step: the step runs at the straggler's compute
// time however many GPUs straggle, while the one-GPU reference (speedup, efficiency) keeps the healthy speed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "topology/topology.hpp"

namespace cclab {

// Which links a fault hits: exactly one of kind, link and fraction.
struct LinkSelection {
  std::string kind;     // a link kind, or
  std::string link;     // one link by name, or
  double fraction = 0;  // this fraction of the inter-node links, picked with `seed`
  std::uint64_t seed = 1;

  bool active() const { return !kind.empty() || !link.empty() || fraction > 0; }
  std::string key() const;
};

struct LinkDegradation {
  LinkSelection links;
  double bandwidth_factor = 1;
  double extra_latency_s = 0;
  bool active() const { return links.active(); }
  std::string key() const;  // identifies the degradation (cache key, descriptions)
};

struct LinkFailure {
  LinkSelection links;
  bool active() const { return links.active(); }
};

struct Stragglers {
  int gpus = 0;
  double factor = 1;
  bool active() const { return gpus > 0 && factor != 1; }
};

// Lost nodes (Horovod elastic): `nodes` nodes die after step `at_step`; the survivors re-form a smaller
// world (same per-GPU batch, collectives re-planned for it), reload the last checkpoint (taken every
// `checkpoint_every` steps) after `restart_s`, and redo the steps since. The job is `steps` steps of the full
// world's global batch, i.e. a fixed number of samples.
//
// A checkpoint stalls the job for `checkpoint_write_s` (a synchronous save: the ranks wait at the next step
// for rank 0 to finish writing, as with Horovod's state.commit() or torch.save behind a barrier). That is
// the price of a short interval; the redone steps are the price of a long one, so the two together give the
// interval a user should pick.
struct LostNodes {
  int nodes = 0;
  long at_step = 0;
  long checkpoint_every = 1;
  double checkpoint_write_s = 0;
  double restart_s = 0;
  long steps = 0;
  bool active() const { return nodes > 0; }
};

// The elastic outcome, from the healthy and the shrunk step predictions.
struct ElasticOutcome {
  int gpus_after = 0;
  long redone_steps = 0;                       // since the last checkpoint
  double lost_work_s = 0;                      // their time
  double recovery_s = 0;                       // restart
  double step_before_s = 0, step_after_s = 0;  // one training step on the full and on the shrunk world
  double samples_per_s_before = 0, samples_per_s_after = 0;
  long steps_after = 0;                 // steps the survivors run from the reloaded checkpoint to the end
  long checkpoints = 0;                 // written in the job with the loss (before it and after the restart)
  double checkpoint_s = 0;              // their writing time
  double job_s = 0, healthy_job_s = 0;  // time for the whole job, with and without the loss
};
ElasticOutcome elastic_outcome(const LostNodes& lost, int gpus_before, int gpus_after, int batch_per_gpu,
                               double step_before_s, double step_after_s);

// The preset spec with `lost` fewer nodes ("dgx_a100:32,nic=..." -> "dgx_a100:31,nic=..."). ConfigError for
// topology files or when no node would be left.
std::string shrunk_topology_spec(const std::string& spec, int lost);

struct FaultedTopology {
  std::shared_ptr<const topo::Topology> topology;
  int degraded_links = 0, failed_links = 0;
};

// The topology `spec` with the degradation and the failures applied. ConfigError when a selection matches no
// link (naming what would be valid) or when the failures partition the GPUs.
FaultedTopology faulted_topology(const std::string& spec, const LinkDegradation& degrade,
                                 const LinkFailure& fail);

}  // namespace cclab
