// Scenario files: a what-if study of a data-parallel training step, as YAML (format and an annotated example
// in docs/scenario-format.md). Any scalar field may be given as a list instead; the scenario then expands to
// the Cartesian product of its lists (a sweep), in document order, the first list varying slowest.
//
// Loading resolves everything a prediction needs — topologies built, workloads read, compute profiles looked
// up — so that every error is reported before a long sweep starts, as FILE:LINE: field: message.
#pragma once

#include "engine/model/cost.hpp"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/plan/registry.hpp"
#include "engine/whatif/faults.hpp"
#include "engine/whatif/step_model.hpp"
#include "engine/whatif/workload.hpp"
#include "topology/topology.hpp"

namespace cclab {

enum class TimeBackend { AlphaBeta, Sim };

struct ScenarioPoint {
  // Every swept field with this point's value, in document order; `label()` joins them (the key of a point
  // in regression baselines).
  std::vector<std::pair<std::string, std::string>> swept;
  std::string label() const;

  std::string topology_spec;  // the preset spec or file it was built from
  std::shared_ptr<const topo::Topology> topology;
  std::shared_ptr<const Workload> workload;
  ComputeProfile compute;
  std::string compute_source;  // "defaults for a100" or "scenario"
  std::string algorithm;       // an allreduce algorithm name, or "auto" (per bucket, cheapest by cost)
  FusionPolicy fusion;
  GradientSync sync = GradientSync::AllReduce;
  PlanOptions plan;
  // communication.protocol (default auto: NCCL's cheapest per bucket, chosen by the α-β model; backend: sim
  // simulates with the chosen one) and communication.reduce_rate.
  CostParams cost = default_cost();
  static CostParams default_cost() {
    CostParams c;
    c.protocol = Protocol::Auto;
    return c;
  }
  TimeBackend backend = TimeBackend::AlphaBeta;
  LinkDegradation degrade;  // faults.degrade and faults.fail (the topology has them applied)
  LinkFailure fail;
  int degraded_links = 0, failed_links = 0;
  Stragglers stragglers;                                  // faults.stragglers
  LostNodes lost;                                         // faults.lost_nodes
  std::shared_ptr<const topo::Topology> shrunk_topology;  // the world after the loss

  int gpus() const { return static_cast<int>(topology->gpus().size()); }
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;                     // the file, or "<built-in default>"
  std::string output_dir;                 // outputs.dir, relative paths against the working directory
  std::vector<std::string> swept_fields;  // short names, as in labels
  std::vector<ScenarioPoint> points;
};

// `overrides` are FIELD=VALUE assignments applied to the document before it is read
// ("communication.algorithm=[ring,tree]", "topology.nic=100Gbps"); VALUE is YAML, so a list makes a sweep.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
// `base_dir` resolves relative file paths (topology and workload files) inside the scenario.
Scenario parse_scenario(const std::string& text, const std::string& source, const std::string& base_dir,
                        const std::vector<std::string>& overrides = {});

// The built-in default (scenarios/default.yaml, compiled in): ResNet-50 on DGX A100 nodes with HDR
// InfiniBand, 8 -> 256 GPUs, ring, tree, hierarchical and auto.
const std::string& default_scenario_text();

}  // namespace cclab
