// `cclab compare LOG... --topology T`: nccl-tests measurements next to the model's predictions, per size.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/measure/compare.hpp"
#include "topology/presets.hpp"

namespace cclab::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> logs;
  CollectiveArgs
      collective;  // topology, chunk, channels, inter, reduce-bw; --collective only when the log is mute
  // NCCL ran the measurement: the cheapest of its own algorithms, unless the user names the one it used.
  std::string algorithm = "nccl";
  bool collective_given = false, algorithm_given = false, protocol_given = false;
};

std::string percent(std::optional<double> e) {
  return e ? fmt::format("{:.1f}%", *e * 100) : std::string("-");
}

void run_compare(const CompareArgs& args) {
  // `auto`: each log's own machine, from its device lines (preset_for_log).
  const bool from_log = args.collective.topology == "auto";
  const auto given = from_log ? nullptr : topo::load_topology_shared(args.collective.topology);
  std::optional<Collective> collective;
  if (args.collective_given) {
    collective = parse_collective(args.collective.collective);
    if (!collective) {
      throw ConfigError(fmt::format("--collective '{}' is unknown (valid: {})", args.collective.collective,
                                    kCollectiveNames));
    }
  }
  for (const std::string& path : args.logs) {
    const NcclTestsLog log = read_nccl_tests_log(path);
    const std::string spec = from_log ? preset_for_log(log) : std::string();
    const auto topology = from_log ? topo::load_topology_shared(spec) : given;
    const std::string label = from_log ? spec + ", from the log's device lines" : topology->name();
    CostParams cost = args.collective.cost_params();
    const LogChoice choice = choice_for_log(
        log, collective, args.algorithm_given ? std::optional(args.algorithm) : std::nullopt,
        args.protocol_given ? std::optional(cost.protocol) : std::nullopt, args.algorithm, cost.protocol);
    cost.protocol = choice.protocol;
    cost.auto_protocols = choice.auto_protocols;
    const Comparison c = compare_with_model(log, *topology, collective, choice.algorithm,
                                            args.collective.plan_options(), cost, choice.by_size);
    fmt::print("# {}: {} on {} ranks{} vs {} (α-β model, algorithm {}{})\n", path, to_string(c.collective),
               c.ranks, log.program.empty() ? "" : fmt::format(" ({})", log.program), label, choice.algorithm,
               choice.note);
    // On stderr, so that the table stays what it was; a mismatch makes its errors the topology's, not the
    // model's.
    for (const std::string& m : machine_mismatches(log, *topology))
      fmt::print(stderr, "cclab: warning: {}: {}\n", path, m);
    for (const std::string& m : log.notes)
      fmt::print(stderr, "cclab: warning: {}: {}\n", path, m);
    for (const std::string& m : c.notes)
      fmt::print(stderr, "cclab: warning: {}: {}\n", path, m);
    fmt::print("{:>12} {:>14} {:>14} {:>8} {:>12} {:>12}  {}\n", "size(B)", "measured(us)", "predicted(us)",
               "error", "busbw(GB/s)", "predicted", "algorithm");
    for (const ComparedRow& r : c.rows) {
      fmt::print("{:>12} {:>14.2f} {:>14.2f} {:>7.1f}% {:>12.2f} {:>12.2f}  {}\n", r.measured.bytes,
                 r.measured.time_us, r.predicted_s * 1e6, r.error * 100, r.measured.busbw_GBps,
                 r.predicted_busbw_GBps, r.algorithm);
    }
    constexpr std::uint64_t kLarge = 64ULL << 20;
    fmt::print("# median |error|: {} over {} sizes; >= 64 MiB: {}; below: {}\n",
               percent(median_abs_error(c, 0, UINT64_MAX)), c.rows.size(),
               percent(median_abs_error(c, kLarge, UINT64_MAX)), percent(median_abs_error(c, 0, kLarge - 1)));
    // The log's tuner lines against NCCL's tuning model as cclab reproduces it: a check of the graphs.
    if (const auto agreement = tuner_agreement(log, *topology, c.collective, args.collective.plan_options(),
                                               cost.auto_protocols)) {
      constexpr std::size_t kShown = 4;
      std::vector<std::string> shown(
          agreement->differences.begin(),
          agreement->differences.begin() +
              static_cast<std::ptrdiff_t>(std::min(kShown, agreement->differences.size())));
      fmt::print(
          "# NCCL's tuning model as cclab reproduces it picks the log's algorithm and protocol at {} of {} "
          "sizes{}{}{}\n",
          agreement->agree, agreement->sizes, shown.empty() ? "" : "; differs at ", fmt::join(shown, "; "),
          agreement->differences.size() > kShown
              ? fmt::format(" and {} more", agreement->differences.size() - kShown)
              : "");
    }
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare", "Compare nccl-tests measurements (text output or -J JSON) with the model, size by size");
  cmd->add_option("logs", args->logs, "nccl-tests output files")->required();
  // A log names its GPUs and hosts: the machine comes from it unless another is given.
  args->collective.topology = "auto";
  args->collective.add_to(*cmd);
  cmd->get_option("--topology")
      ->description(
          "preset NAME:NODES[,key=value...], YAML file, or auto: the board of the log's GPUs, "
          "a node per host (its device lines)");
  cmd->add_option("--algo", args->algorithm,
                  "algorithm to cost: the one the measurement used (an NCCL_ALGO value such as Ring, "
                  "NVLSTree or ^NVLS, or a cclab name), nccl (what NCCL's own tuning model picks among its "
                  "algorithms when NCCL_ALGO is unset), or auto (every cclab algorithm)")
      ->capture_default_str();
  cmd->callback([args, cmd] {
    args->collective_given = cmd->count("--collective") > 0;
    args->algorithm_given = cmd->count("--algo") > 0;
    args->protocol_given = cmd->count("--protocol") > 0;
    run_compare(*args);
  });
}

}  // namespace cclab::cli
