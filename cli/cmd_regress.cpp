// `cclab regress SCENARIO... --baseline FILE`: the CI gate on scaling efficiency (engine/whatif/regress.hpp).
// Predicts each scenario (split over the processes of an MPI launch), judges every point against the
// committed baseline, prints the verdicts and exits 1 on a regression, a new or a missing point.
#include <unistd.h>

#include <chrono>
#include <set>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/distributed.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "engine/whatif/predict.hpp"
#include "engine/whatif/regress.hpp"
#include "engine/whatif/scenario.hpp"

namespace cclab::cli {
namespace {

struct RegressArgs {
  std::vector<std::string> scenarios;
  std::string baseline;
  double tolerance = 0.01;
  bool update = false;
  std::string junit;
  int jobs = 0;        // threads for the α-β points; 0: one per core
  bool exact = false;  // sim points op by op instead of by pattern
};

int run_regress(const RegressArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  const BaselinePoints baseline = read_baseline(args.baseline);
  if (baseline.empty() && !args.update) {
    throw ConfigError(
        fmt::format("{}: no baseline to compare with (run with --update to create it)", args.baseline));
  }
  BaselinePoints current;
  std::set<std::string> names;
  bool root = true;
  for (const std::string& path : args.scenarios) {
    const Scenario scenario = load_scenario(path);
    if (!names.insert(scenario.name).second)
      throw ConfigError(fmt::format("{}: scenario name '{}' is used twice", path, scenario.name));
    PredictOptions options;
    options.progress = ::isatty(STDERR_FILENO);
    use_simulator(options, !args.exact);
    options.jobs = args.jobs;
    const auto distributed = predict_distributed(scenario, options);
    if (!distributed) {  // a rank other than 0 of an MPI launch: rank 0 judges and prints
      root = false;
      continue;
    }
    const std::vector<PointResult>& results = *distributed;
    for (const PointResult& r : results) {
      current[baseline_key(scenario.name, r.point->label())] =
          BaselineFigures{r.point->gpus(), r.prediction.step_s, r.prediction.efficiency};
    }
    fmt::print("regress: {} ({}): {} points\n", scenario.name, path, results.size());
  }
  if (!root) return 0;

  const std::vector<Verdict> verdicts = judge(current, baseline, names, args.tolerance);
  int counts[5] = {};
  for (const Verdict& v : verdicts) {
    ++counts[v.kind];
    static const char* const tags[] = {"", "improved", "REGRESSED", "NEW", "MISSING"};
    if (v.kind != Verdict::Same)
      fmt::print("{:>9}  {} | {}: {}\n", tags[v.kind], v.scenario, v.point, v.detail);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!args.junit.empty()) write_junit(args.junit, verdicts, seconds);
  fmt::print(
      "regress: {} points: {} within {:.1f}%, {} improved, {} regressed, {} new, {} missing ({:.1f} s)\n",
      verdicts.size(), counts[Verdict::Same], 100 * args.tolerance, counts[Verdict::Improved],
      counts[Verdict::Regressed], counts[Verdict::New], counts[Verdict::Missing], seconds);
  if (args.update) {
    const BaselinePoints merged = merged_baseline(baseline, current, names);
    write_baseline(args.baseline, merged);
    fmt::print("regress: updated {} ({} points)\n", args.baseline, merged.size());
    return 0;
  }
  return counts[Verdict::Regressed] + counts[Verdict::New] + counts[Verdict::Missing] > 0 ? 1 : 0;
}

}  // namespace

void add_regress_command(CLI::App& app) {
  auto args = std::make_shared<RegressArgs>();
  auto* cmd = app.add_subcommand(
      "regress",
      "CI gate: predict scenarios and fail when efficiency or step time regressed from a baseline");
  cmd->add_option("scenarios", args->scenarios, "scenario YAML files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--baseline", args->baseline, "baseline JSON (created by --update)")->required();
  cmd->add_option("--tolerance", args->tolerance,
                  "allowed efficiency drop (absolute, 0.01 = 1 point) and relative step-time rise")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--update", args->update, "rewrite the baseline with this run's predictions");
  cmd->add_option("--junit", args->junit, "also write a JUnit XML report to FILE");
  cmd->add_option(
         "-j,--jobs", args->jobs,
         "threads for the α-β points, SimGrid processes for the simulated ones (default 0: one per core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--exact", args->exact,
                "simulate `backend: sim` points op by op (the reference) instead of by pattern (each phase's "
                "flows solved once in SimGrid; docs/simulation.md compares the two)");
  cmd->callback([args] {
    const int code = run_regress(*args);
    if (code != 0) throw ExitStatus{code};
  });
}

}  // namespace cclab::cli
