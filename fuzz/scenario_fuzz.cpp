// libFuzzer harness: the scenario loader (engine/whatif/scenario.hpp), with the fault fields and sweeps. An
// input is either refused with an error naming "fuzz.yaml", or it loads into points that a prediction can
// run: each has a topology with GPUs, a non-empty workload, finite non-negative compute times, and the step
// model, given a simple timer, predicts a finite step no shorter than the compute it contains. File
// references resolve against fuzz/files/ (a topology and two workloads the seed corpus names).
#include <cmath>

#include <fmt/format.h>

#include "engine/whatif/scenario.hpp"
#include "fuzz/fuzz_check.hpp"

#ifndef CCLAB_FUZZ_BASE_DIR
#define CCLAB_FUZZ_BASE_DIR "."
#endif

namespace {

using cclab::fuzz::require;

void check_point(const cclab::ScenarioPoint& point) {
  require(point.topology && point.gpus() >= 1, "a point without GPUs", point.label());
  require(point.workload && !point.workload->tensors.empty(), "a point without a workload", point.label());
  const auto& c = point.compute;
  for (double t : {c.forward_s, c.backward_s, c.optimizer_s})
    require(std::isfinite(t) && t >= 0, "a compute time that is not finite and non-negative", point.label());
  require(c.batch_per_gpu >= 1, "a batch below one sample", point.label());
  const double bandwidth_Bps = 10e9;
  const auto timer = [&](const cclab::CollectiveSpec& spec, std::string& algorithm) {
    algorithm = "ring";
    return 1e-6 + static_cast<double>(spec.count) * 4 / bandwidth_Bps;
  };
  const auto step = cclab::predict_step(*point.workload, point.compute, point.fusion, point.gpus(), timer,
                                        point.sync, point.stragglers.factor);
  const double compute_s = c.forward_s + c.backward_s + c.optimizer_s;
  require(std::isfinite(step.step_s) && step.step_s >= compute_s * (1 - 1e-9),
          "a predicted step that is not finite or shorter than its compute",
          fmt::format("{}: step {} s, compute {} s", point.label(), step.step_s, compute_s));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cclab::fuzz::as_text(data, size);
  auto scenario = cclab::fuzz::load_or_clear_error(
      "fuzz.yaml", [&] { return cclab::parse_scenario(text, "fuzz.yaml", CCLAB_FUZZ_BASE_DIR); });
  if (!scenario) return 0;
  require(!scenario->points.empty(), "a scenario without points loaded");
  // The step model runs per point; the first few are enough to reach every field's effect.
  for (std::size_t i = 0; i < scenario->points.size() && i < 4; ++i)
    check_point(scenario->points[i]);
  return 0;
}
