// `cclab predict [SCENARIO]`: scaling of a data-parallel training step over a scenario's sweep (GPU counts,
// algorithms, fusion, link speeds, ...). Without a scenario: the built-in default, ResNet-50 on DGX A100
// nodes (HDR InfiniBand, one switch), 8 -> 256 GPUs, ring, tree, hierarchical and auto.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/distributed.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "engine/whatif/predict.hpp"
#include "engine/whatif/scenario.hpp"

namespace cclab::cli {
namespace {

struct PredictArgs {
  std::string scenario;  // empty: the built-in default
  std::vector<std::string> overrides;
  std::string backend;  // overrides the scenario's backend when set
  std::string format = "table";
  std::string out;
  std::string timeline;
  std::string verify = "auto";
  int jobs = 0;        // threads for the α-β points; 0: one per core
  bool exact = false;  // sim points op by op instead of by pattern
};

// Efficiency vs GPUs, one line per algorithm, as SVG and PNG, when gnuplot is installed (the set-up script
// installs gnuplot-nox). Returns the files written.
// A line is one setting of everything swept except the GPU count.
std::vector<std::string> plot_efficiency(const std::vector<PointResult>& results, const std::string& dir,
                                         const std::string& title) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return {};
  std::vector<std::string> lines;
  auto line_of = [](const ScenarioPoint& p) {
    std::string name = p.algorithm;
    for (const auto& [field, value] : p.swept)
      if (field != "nodes" && field != "algorithm") name += fmt::format(" {}={}", field, value);
    return name;
  };
  for (const PointResult& r : results)
    if (std::find(lines.begin(), lines.end(), line_of(*r.point)) == lines.end())
      lines.push_back(line_of(*r.point));
  std::ofstream data(dir + "/efficiency.dat");
  for (const std::string& line : lines) {
    data << "\"" << line << "\"\n";
    for (const PointResult& r : results)
      if (line_of(*r.point) == line) data << r.point->gpus() << " " << 100 * r.prediction.efficiency << "\n";
    data << "\n\n";
  }
  data.close();
  std::ofstream script(dir + "/efficiency.gp");
  script << "set title \"" << title
         << "\" noenhanced\nset xlabel \"GPUs\"\nset ylabel \"scaling efficiency (%)\"\n"
         << "set logscale x 2\nset key bottom left\nset grid\n";
  for (const char* terminal : {"svg size 800,500", "pngcairo size 800,500"}) {
    const std::string ext = std::string(terminal).starts_with("svg") ? "svg" : "png";
    script << "set terminal " << terminal << "\nset output \"" << dir << "/efficiency." << ext << "\"\n"
           << "plot for [i=0:" << lines.size() - 1 << "] \"" << dir
           << "/efficiency.dat\" index i using 1:2 with linespoints title columnheader(1)\n";
  }
  script.close();
  const std::string command = fmt::format("gnuplot \"{}/efficiency.gp\" 2>/dev/null", dir);
  if (std::system(command.c_str()) != 0)
    throw BackendError(fmt::format("gnuplot failed on {}/efficiency.gp", dir));
  return {dir + "/efficiency.svg", dir + "/efficiency.png"};
}

void run_predict(const PredictArgs& args) {
  std::vector<std::string> overrides = args.overrides;
  if (!args.backend.empty()) overrides.push_back("backend=" + args.backend);
  const Scenario scenario = args.scenario.empty()
                                ? parse_scenario(default_scenario_text(), "<built-in default>", "", overrides)
                                : load_scenario(args.scenario, overrides);
  const bool table = args.format == "table";
  PredictOptions options;
  options.progress = table && ::isatty(STDERR_FILENO);
  if (args.verify == "all") options.verify.full_up_to_ops = SIZE_MAX;
  if (args.verify == "none") options.verify.check = false;
  use_simulator(options, !args.exact);
  options.jobs = args.jobs;
  PredictStats stats;
  const auto distributed = predict_distributed(scenario, options, &stats);
  if (!distributed) return;  // a rank other than 0 of an MPI launch: rank 0 prints and writes
  const std::vector<PointResult>& results = *distributed;
  if (args.format == "csv") {
    fmt::print("{}", results_csv(scenario, results));
  } else if (args.format == "json") {
    fmt::print("{}\n", results_json(scenario, results).dump(2));
  } else {
    print_results_table(scenario, results);
    fmt::print("# {} distinct schedules, {} passed the compact checks, {} verified in full{}\n",
               stats.schedules, stats.checked, stats.verified,
               stats.verified < stats.schedules ? " (--verify all expands and verifies every op)" : "");
    // Which collectives the simulator could not solve by pattern (explicit passes, trees whose lanes
    // contend: docs/simulation.md) and ran op by op, the slow way.
    if (stats.simulated > 0)
      fmt::print("# {} collectives simulated: {} by pattern, {} op by op{}\n", stats.simulated,
                 stats.simulated_by_pattern, stats.simulated - stats.simulated_by_pattern,
                 args.exact ? " (--exact)" : "");
  }
  const std::string dir = !args.out.empty() ? args.out : scenario.output_dir;
  if (!dir.empty()) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/predict.csv") << results_csv(scenario, results);
    std::ofstream(dir + "/predict.json") << results_json(scenario, results).dump(2) << "\n";
    if (table) fmt::print("# wrote {0}/predict.csv and {0}/predict.json\n", dir);
    const auto plots = plot_efficiency(results, dir, fmt::format("{}: scaling efficiency", scenario.name));
    if (table && !plots.empty()) fmt::print("# plotted {} and {}\n", plots[0], plots[1]);
  }
  if (!args.timeline.empty() && !results.empty()) {
    // The last point of the sweep: by the usual order, the largest GPU count with the last algorithm.
    write_step_timeline(results.back(), args.timeline);
    if (table) {
      fmt::print("# timeline of one step ({} GPUs, {}) in {}\n", results.back().point->gpus(),
                 results.back().point->label(), args.timeline);
    }
  }
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd = app.add_subcommand(
      "predict", "Predict data-parallel training step time and scaling efficiency over a scenario's sweep");
  cmd->add_option(
      "scenario", args->scenario,
      "scenario YAML (docs/scenario-format.md); default: the built-in ResNet-50 / DGX A100 sweep");
  cmd->add_option("--set", args->overrides,
                  "FIELD=VALUE override of a scenario field, YAML value: --set topology.nodes=[1,2,4]")
      ->allow_extra_args(false);
  cmd->add_option("--backend", args->backend, "collective times from ab (α-β model) or sim (SimGrid)")
      ->check(CLI::IsMember({"ab", "sim"}));
  cmd->add_option("--format", args->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--out", args->out, "write predict.csv, predict.json and efficiency plots to DIR");
  cmd->add_option("--timeline", args->timeline,
                  "write a Chrome trace (Perfetto, chrome://tracing) of one predicted step to FILE");
  cmd->add_option("--verify", args->verify,
                  "verify schedules before timing them: auto (the compact checks), all (also every op of the "
                  "expansion), none")
      ->check(CLI::IsMember({"auto", "all", "none"}))
      ->capture_default_str();
  cmd->add_option(
         "-j,--jobs", args->jobs,
         "threads for the α-β points, SimGrid processes for the simulated ones (default 0: one per core; the "
         "output is the same for any count)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--exact", args->exact,
                "simulate `backend: sim` points op by op (the reference) instead of by pattern (each phase's "
                "flows solved once in SimGrid; docs/simulation.md compares the two)");
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace cclab::cli
