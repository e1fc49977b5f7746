// Running a scenario: one training-step prediction per point, with the collective times from the α-β model or
// SimGrid on the engine's own verified schedules. Shared by `cclab predict` and `cclab regress`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/scenario.hpp"
#include "engine/step_model.hpp"

namespace cclab::cli {

struct PointResult {
  const ScenarioPoint* point = nullptr;
  StepPrediction prediction;
  std::string bucket_algorithms;          // "ring x3, tree x2": what the buckets used (auto picks per bucket)
  std::optional<ElasticOutcome> elastic;  // faults.lost_nodes: the job after the loss
};

// How a prediction verifies schedules before timing them. Every schedule passes the compact checks
// (engine/check/verified.hpp: O(C·P) for ring and tree passes, the full verifier on explicit passes); those
// up to `max_ops` explicit ops are also expanded and fully verified, and the report says how many were. Every
// planner is fully verified for every shape in the test suite (tests/planner_matrix_test.cpp, up to 64
// ranks).
struct VerifyPolicy {
  std::size_t max_ops = 1'000'000;  // 0: no verification at all; SIZE_MAX: every schedule in full
};

struct PredictStats {
  std::size_t schedules = 0;  // distinct schedules planned and timed
  std::size_t checked = 0;    // passed the compact checks
  std::size_t verified = 0;   // expanded and fully verified
};

// Predicts every point of `scenario` in order. With `progress`, a progress line on stderr.
std::vector<PointResult> predict_scenario(const Scenario& scenario, bool progress,
                                          const VerifyPolicy& verify = {}, PredictStats* stats = nullptr);

// Rows as CSV (header first) and as a JSON array; the swept fields are columns of their own.
std::string results_csv(const Scenario& scenario, const std::vector<PointResult>& results);
nlohmann::json results_json(const Scenario& scenario, const std::vector<PointResult>& results);
void print_results_table(const Scenario& scenario, const std::vector<PointResult>& results);

// Chrome trace of one predicted step: per rank a compute row and a communication row.
void write_step_timeline(const PointResult& result, const std::string& path);

}  // namespace cclab::cli
