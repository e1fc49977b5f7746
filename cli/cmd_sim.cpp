// `cclab sim`: nccl-tests-style sweep of a collective over sizes, simulated in SimGrid, per algorithm.

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/units.hpp"
#include "engine/check/verified.hpp"
#include "engine/ir/trace.hpp"
#include "engine/measure/nccl_tests_log.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/plan/selection.hpp"
#include "sim/simulator.hpp"
#include "topology/presets.hpp"

namespace cclab::cli {
namespace {

struct SimArgs {
  CollectiveArgs collective;
  std::string algorithm = "all";
  std::string min_bytes = "8";
  std::string max_bytes = "256MiB";
  int factor = 2;
  std::string dump_platform;
  bool platform_all_pairs = false;
  std::string timeline;
  bool exact = false;  // op by op instead of by pattern (predict's and regress's flag too)
  bool fast = false;   // the old name of the default, accepted for scripts that pass it
  std::string json;    // -J: nccl-tests' JSON schema
  std::string csv;
  int jobs = 0;  // SimGrid processes at once; 0: one per core
};

std::uint64_t size_arg(const std::string& text, const char* flag) {
  try {
    return parse_size_bytes(text);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", flag, e.what()));
  }
}

void run_sim(const SimArgs& args) {
  const topo::Topology topology = topo::load_topology(args.collective.topology);
  const std::uint64_t min_bytes = size_arg(args.min_bytes, "-b"), max_bytes = size_arg(args.max_bytes, "-e");
  if (args.factor < 2) throw ConfigError(fmt::format("-f {} must be >= 2", args.factor));
  if (min_bytes > max_bytes) throw ConfigError("-b must not exceed -e");
  const PlanOptions options = args.collective.plan_options();
  sim::SimParams params;
  params.compute = args.collective.cost_params();
  params.platform_all_pairs = args.platform_all_pairs;
  params.by_pattern = !args.exact;
  if (args.exact && args.fast)
    throw ConfigError("--exact and --fast: choose one (by pattern is the default)");

  const CollectiveSpec probe = args.collective.spec(topology, "0");
  std::vector<std::string> names;
  if (args.algorithm == "all") {
    for (const Algorithm* a : algorithms_for(probe.collective))
      names.push_back(a->name);
  } else {
    names.push_back(args.algorithm);
  }
  const std::size_t elem = dtype_size_bytes(probe.dtype);
  const bool logging = !args.json.empty() || !args.csv.empty();
  if (logging && names.size() != 1) {
    throw ConfigError(
        "-J and --csv write one algorithm's rows, as nccl-tests does: give --algo NAME, auto or nccl");
  }
  NcclTestsLog log;
  log.program = nccl_tests_program(probe.collective, names.size() == 1 ? names[0] : "");
  log.collective = probe.collective;
  log.ranks = probe.world_size;
  log.source = topology.name();
  fmt::print("# cclab sim: {} on {} ({} GPUs), SimGrid CM02 max-min network, {} {}\n",
             to_string(probe.collective), topology.name(), topology.gpus().size(), to_string(probe.dtype),
             redop_column(probe.collective, probe.op));
  fmt::print("# {:>16} {:>12} {:>12} {:>6} {:>6} {:>12} {:>8} {:>8} {:>12} {:>8}\n", "algorithm", "size(B)",
             "count", "type", "redop", "time(us)", "algbw", "busbw", "α-β(us)", "protocol");
  // Every point planned first, then simulated: the platform dump (first point) and the timeline (last point,
  // op by op) on their own, the rest side by side (a SimGrid process each, `--jobs` at once).
  struct Point {
    std::string name;
    CollectiveSpec spec;
    std::string not_applicable;  // why the algorithm does not apply; empty if it does
    std::optional<VerifiedSchedule> schedule;
    ProtocolRun modelled;
    sim::SimParams params;
    RunResult simulated;
  };
  std::vector<Point> sweep;
  for (std::uint64_t bytes = min_bytes; bytes <= max_bytes; bytes *= args.factor) {
    CollectiveSpec spec = args.collective.spec(topology, std::to_string(bytes / elem * elem));
    // An alltoall moves equal blocks: as nccl-tests, the count rounds down to a multiple of the ranks.
    if (spec.collective == Collective::AllToAll)
      spec.count -= spec.count % static_cast<std::uint64_t>(spec.world_size);
    for (const std::string& name : names) {
      Point& p = sweep.emplace_back(Point{name, spec, "", std::nullopt, {}, params, {}});
      // plan_compact resolves a selection (auto, nccl, an NCCL_ALGO name) from one cost table; the schedule
      // names the algorithm it chose.
      PlannedCompact planned = plan_compact(spec, topology, name, options, params.compute);
      if (!planned.schedule) {
        p.not_applicable = planned.reason;
        continue;
      }
      p.schedule.emplace(verify_compact(std::move(*planned.schedule)));
      // The protocol (auto: the α-β model's cheapest for this schedule) prices both the simulation and α-β.
      p.modelled =
          cheapest(estimate_compact_cost_by_protocol(p.schedule->compact(), topology, params.compute));
      p.params.protocol = p.modelled.protocol;
      // A timeline needs per-op times: every point op by op, so that all rows are alike.
      if (!args.timeline.empty()) p.params.by_pattern = false;
    }
    if (bytes > max_bytes / args.factor) break;
  }
  std::vector<std::size_t> planned;
  for (std::size_t i = 0; i < sweep.size(); ++i)
    if (sweep[i].schedule) planned.push_back(i);
  std::optional<std::size_t> dump_at, timeline_at;
  if (!args.dump_platform.empty() && !planned.empty()) {
    dump_at = planned.front();
    sweep[*dump_at].params.platform_xml_path = args.dump_platform;
    sweep[*dump_at].simulated =
        sim::simulate_compact(sweep[*dump_at].schedule->compact(), topology, sweep[*dump_at].params);
  }
  if (!args.timeline.empty() && !planned.empty()) {
    timeline_at = planned.back();
    Point& last = sweep[*timeline_at];
    const Schedule ops = to_explicit(last.schedule->compact());
    last.simulated = sim::simulate(ops, topology, last.params);
    write_chrome_trace_file(ops, last.simulated, args.timeline, TraceOptions{"sim", 0});
  }
  std::vector<sim::BatchJob> jobs;
  std::vector<std::size_t> job_point;
  for (std::size_t i : planned) {
    if (i == dump_at || i == timeline_at) continue;
    jobs.push_back({&sweep[i].schedule->compact(), &topology, sweep[i].params});
    job_point.push_back(i);
  }
  const int parallel =
      args.jobs > 0 ? args.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::size_t done = 0;
  const bool progress = !jobs.empty() && ::isatty(STDERR_FILENO);
  std::vector<sim::BatchOutcome> outcomes = sim::simulate_compact_batch(jobs, parallel, [&](std::size_t) {
    if (progress)
      fmt::print(stderr, "\r[{}/{}] points simulated, {} at once   ", ++done, jobs.size(), parallel);
  });
  if (progress) fmt::print(stderr, "\r{:60}\r", "");
  int pattern_points = 0;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    if (!outcomes[k].result) throw BackendError(outcomes[k].error);
    sweep[job_point[k]].simulated = std::move(*outcomes[k].result);
    pattern_points += outcomes[k].by_pattern ? 1 : 0;
  }

  double busbw_sum = 0;
  int points = 0;
  for (const Point& p : sweep) {
    const std::uint64_t count = p.spec.count;
    if (!p.schedule) {
      fmt::print("  {:>16} {:>12} {:>12}  n/a: {}\n", p.name, count * elem, count, p.not_applicable);
      continue;
    }
    const CompactSchedule& schedule = p.schedule->compact();
    const double total_s = p.simulated.total_s;
    const auto [algbw, busbw] = nccl_tests_bandwidths(p.spec.collective, p.spec.world_size,
                                                      static_cast<double>(count * elem), total_s);
    busbw_sum += busbw, ++points;
    log.rows.push_back(NcclTestsRow{count * elem,
                                    count,
                                    nccl_tests_type(p.spec.dtype),
                                    std::string(redop_column(p.spec.collective, p.spec.op)),
                                    total_s * 1e6,
                                    algbw,
                                    busbw,
                                    {},
                                    {},
                                    is_rooted(p.spec.collective) ? p.spec.root : -1});
    fmt::print("  {:>16} {:>12} {:>12} {:>6} {:>6} {:>12.2f} {:>8.2f} {:>8.2f} {:>12.2f} {:>8}\n",
               p.name == schedule.algorithm ? p.name : p.name + ":" + schedule.algorithm, count * elem, count,
               to_string(p.spec.dtype), redop_column(p.spec.collective, p.spec.op), total_s * 1e6, algbw,
               busbw, p.modelled.run.total_s * 1e6, to_string(p.modelled.protocol));
  }
  fmt::print("# Avg bus bandwidth    : {:.3f}\n", points ? busbw_sum / points : 0.0);
  if (params.by_pattern) {
    const int op_by_op_points = points - pattern_points;
    fmt::print(
        "# by pattern: {} of {} points, {} op by op{} (--exact: every point op by op)\n", pattern_points,
        points, op_by_op_points,
        op_by_op_points > 0
            ? " (explicit passes, tree lanes contending on a link, tree or CollNet flows beside a "
              "neighbour's streams, SHARP or NVLS ports other flows cross, --timeline or --dump-platform)"
            : "");
  }
  if (dump_at) fmt::print("# platform written to {}\n", args.dump_platform);
  if (!args.json.empty()) {
    // What produced the file, in nccl-tests' "args" (after the program name).
    const std::vector<std::string> argv = {"cclab-sim",
                                           "--topology",
                                           args.collective.topology,
                                           "--algo",
                                           args.algorithm,
                                           "-b",
                                           args.min_bytes,
                                           "-e",
                                           args.max_bytes,
                                           "-f",
                                           std::to_string(args.factor),
                                           "--protocol",
                                           args.collective.protocol};
    write_output_file(args.json, format_nccl_tests_json(log, argv), "nccl-tests JSON");
    fmt::print("# nccl-tests JSON written to {} (cclab compare reads it)\n", args.json);
  }
  if (!args.csv.empty()) {
    write_output_file(args.csv, format_nccl_tests_csv(log), "CSV");
    fmt::print("# CSV written to {}\n", args.csv);
  }
  if (timeline_at) fmt::print("# timeline of the last point written to {}\n", args.timeline);
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  args->collective.topology = "dgx_a100:4";
  auto* cmd =
      app.add_subcommand("sim", "Simulate a collective in SimGrid over a range of sizes (nccl-tests style)");
  args->collective.add_to(*cmd);
  cmd->add_option(
         "--algo", args->algorithm,
         "algorithm name, auto, nccl (NCCL's own algorithms only), an NCCL_ALGO value (Ring, Tree, "
         "NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT; a list, or ^ and the ones to leave out), or all")
      ->capture_default_str();
  cmd->add_option("-b,--minbytes", args->min_bytes, "smallest size")->capture_default_str();
  cmd->add_option("-e,--maxbytes", args->max_bytes, "largest size")->capture_default_str();
  cmd->add_option("-f,--stepfactor", args->factor, "size multiplier between points")->capture_default_str();
  cmd->add_option("--dump-platform", args->dump_platform,
                  "write the SimGrid XML platform of the first run to FILE");
  cmd->add_flag("--platform-all-pairs", args->platform_all_pairs,
                "--dump-platform routes every pair of ranks (for SMPI runs of other algorithms)");
  cmd->add_option(
      "--timeline", args->timeline,
      "write a Chrome trace (Perfetto) of the last point to FILE (every point then simulated op by op)");
  cmd->add_flag(
      "--exact", args->exact,
      "simulate every op in SimGrid (the reference) instead of by pattern, the default: each phase's "
      "flow pattern solved once in SimGrid, the α-β recurrence advanced with its rates (ring, tree, "
      "SHARP and NVLS passes; explicit passes, trees whose up and down flows contend on a link, tree "
      "and CollNet flows beside a neighbour's streams and SHARP or NVLS ports other flows cross run "
      "op by op anyway; docs/simulation.md compares the two)");
  cmd->add_flag("--fast", args->fast, "by pattern: the default (accepted for scripts that pass it)");
  cmd->add_option("-J,--output-json", args->json,
                  "write the results as nccl-tests -J JSON to FILE (one algorithm: --algo NAME or auto)");
  cmd->add_option("--csv", args->csv, "write the results as CSV to FILE");
  cmd->add_option("-j,--jobs", args->jobs,
                  "simulations run side by side, a SimGrid process each (default 0: one per core; the output "
                  "is the same for any count)");
  cmd->callback([args] { run_sim(*args); });
}

}  // namespace cclab::cli
