// The predict use case: one training-step prediction per point of a scenario, with the collective times from
// the α-β model or a simulator on the engine's own checked schedules, selected (`auto`) by the one Selector
// (engine/plan/selection.hpp). Shared by `cclab predict` and `cclab regress`. The simulator is injected
// (ScheduleTimer): engine/ never depends on sim/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/ir/compact.hpp"
#include "engine/model/schedule_timer.hpp"
#include "engine/whatif/scenario.hpp"
#include "engine/whatif/step_model.hpp"

namespace cclab {

struct PointResult {
  const ScenarioPoint* point = nullptr;
  StepPrediction prediction;
  std::string bucket_algorithms;          // "ring x3, tree x2": what the buckets used (auto picks per bucket)
  std::optional<ElasticOutcome> elastic;  // faults.lost_nodes: the job after the loss
};

// How a prediction verifies schedules before timing them. By default every schedule passes the compact checks
// (engine/check/verified.hpp: O(C·P) preconditions for ring and tree passes, the full verifier on explicit
// passes), which is what the design asks of every backend; the expansions of ring and tree passes are fully
// verified for every shape in the test suite (tests/planner_matrix_test.cpp, up to 64 ranks). `--verify all`
// also expands each schedule and runs the full verifier on every op (the oracle).
struct VerifyPolicy {
  bool check = true;               // false: no verification at all (--verify none)
  std::size_t full_up_to_ops = 0;  // expand and fully verify schedules with at most this many ops
};

struct PredictStats {
  std::size_t schedules = 0;             // distinct schedules planned and timed
  std::size_t checked = 0;               // passed the compact checks
  std::size_t verified = 0;              // expanded and fully verified
  std::size_t simulated = 0;             // distinct collectives simulated (backend: sim)
  std::size_t simulated_by_pattern = 0;  // of those, solved pattern by pattern (the others op by op)
};

struct PredictOptions {
  bool progress = false;  // a progress line on stderr
  VerifyPolicy verify;
  ScheduleTimer simulate;  // for points with `backend: sim`; empty: such points are refused
  // The same simulator for many schedules at once. Where set, the `backend: sim` points' collectives are
  // simulated side by side first (`jobs` processes at once), then the points are predicted from those times.
  ScheduleBatchTimer simulate_batch;
  // Threads for the α-β points and processes for the simulations (0: one per core). Points are independent,
  // so the results are the same as one thread's, in the scenario's order. `backend: sim` points run on the
  // calling thread after the α-β ones (the simulator forks its processes, which a process with other
  // threads running must not).
  int jobs = 0;
};

// Predicts every point of `scenario`, results in the scenario's order.
std::vector<PointResult> predict_scenario(const Scenario& scenario, const PredictOptions& options = {},
                                          PredictStats* stats = nullptr);

// A sweep split over processes (`mpirun -np N cclab predict`, cli/distributed.hpp): process `index` of
// `count` predicts the points i with i % count == index (neighbouring points differ most in size, so each
// process gets small and large ones alike).
struct Shard {
  std::size_t index = 0, count = 1;
  bool owns(std::size_t point) const { return point % count == index; }
};
// The shard's points predicted, each its result or its error, encoded (CBOR) for the gather.
std::string predict_shard(const Scenario& scenario, const PredictOptions& options, Shard shard,
                          PredictStats* stats = nullptr);
// Every shard's encoding merged back into the scenario's order: what predict_scenario returns, the same to
// the last bit (doubles travel exactly), or the first failing point's error, of the type it was thrown as.
std::vector<PointResult> merge_shards(const Scenario& scenario, const std::vector<std::string>& encoded);

// Rows as CSV (header first) and as a JSON array; the swept fields are columns of their own.
std::string results_csv(const Scenario& scenario, const std::vector<PointResult>& results);
nlohmann::json results_json(const Scenario& scenario, const std::vector<PointResult>& results);
void print_results_table(const Scenario& scenario, const std::vector<PointResult>& results);

// Chrome trace of one predicted step: per rank a compute row and a communication row.
void write_step_timeline(const PointResult& result, const std::string& path);

}  // namespace cclab
