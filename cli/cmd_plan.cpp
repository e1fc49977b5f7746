// `cclab plan`: plan a collective on a topology, verify it, and report steps, bytes, α-β time and bandwidth.
#include <algorithm>
#include <chrono>
#include <numeric>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/cost.hpp"
#include "engine/registry.hpp"
#include "engine/schedule_json.hpp"
#include "engine/trace.hpp"
#include "engine/verifier.hpp"
#include "topology/presets.hpp"

namespace cclab::cli {
namespace {

struct PlanArgs {
  CollectiveArgs collective;
  std::string algorithm = "auto";
  std::string size = "1GiB";
  std::string dump;
  std::string timeline;
  int show_ops = 0;
};

void print_cost_table(const CollectiveSpec& spec, const std::vector<CostRow>& rows) {
  fmt::print("{:<18} {:>12} {:>12} {:>12}  {}\n", "algorithm", "time", "algbw(GB/s)", "busbw(GB/s)",
             "status");
  for (const CostRow& row : rows) {
    if (!row.support.ok) {
      fmt::print("{:<18} {:>12} {:>12} {:>12}  n/a: {}\n", row.algorithm, "-", "-", "-", row.support.reason);
      continue;
    }
    const double algbw = row.time_s > 0 ? spec.bytes() / row.time_s / 1e9 : 0;
    fmt::print("{:<18} {:>12} {:>12.2f} {:>12.2f}\n", row.algorithm, format_time(row.time_s), algbw,
               algbw * busbw_factor(spec.collective, spec.world_size));
  }
}

void run_plan(const PlanArgs& args) {
  const topo::Topology topology = topo::load_topology(args.collective.topology);
  const CollectiveSpec spec = args.collective.spec(topology, args.size);
  const PlanOptions options = args.collective.plan_options();
  const CostParams cost = args.collective.cost_params();

  std::string algorithm = args.algorithm;
  if (algorithm == "auto") {
    const auto rows = cost_table(spec, topology, options, cost);
    fmt::print("cost table ({}, α-β model, {}):\n", topology.name(), describe(spec));
    print_cost_table(spec, rows);
    fmt::print("\n");
    if (auto best = cheapest(rows)) algorithm = *best;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Planned planned = plan_collective(spec, topology, algorithm, options, cost);
  if (!planned.schedule) throw ConfigError(planned.reason);
  const Schedule& s = *planned.schedule;
  const auto t1 = std::chrono::steady_clock::now();
  verify_or_throw(s);
  const auto t2 = std::chrono::steady_clock::now();

  fmt::print("plan: {}", format_schedule_summary(s));
  if (args.show_ops != 0) fmt::print("{}", format_schedule_ops(s, args.show_ops));
  const auto bytes = bytes_sent_per_rank(s);
  const auto [min_bytes, max_bytes] = std::minmax_element(bytes.begin(), bytes.end());
  const double mean_bytes =
      std::accumulate(bytes.begin(), bytes.end(), 0.0) / std::max<std::size_t>(1, bytes.size());
  std::size_t max_ops = 0;
  for (const auto& p : s.ranks)
    max_ops = std::max(max_ops, p.ops.size());
  fmt::print("ops: {} in total, at most {} on a rank\n", s.num_ops(), max_ops);
  fmt::print("steps: {}\n", count_steps(s));
  fmt::print("bytes sent per rank: mean {}, min {}, max {} (S = {})\n",
             format_size(static_cast<std::uint64_t>(mean_bytes)), format_size(*min_bytes),
             format_size(*max_bytes), format_size(spec.bytes()));
  fmt::print("verify: OK, out-of-place and in-place (plan {:.3f} s, verify {:.3f} s)\n",
             std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
  const RunResult modelled = estimate_cost(s, topology, cost);
  const double algbw = modelled.total_s > 0 ? spec.bytes() / modelled.total_s / 1e9 : 0;
  fmt::print("α-β time: {}   algbw {:.2f} GB/s   busbw {:.2f} GB/s\n", format_time(modelled.total_s), algbw,
             algbw * busbw_factor(spec.collective, spec.world_size));
  if (!args.timeline.empty()) {
    write_chrome_trace_file(s, modelled, args.timeline, TraceOptions{"alpha-beta", 0});
    fmt::print("α-β timeline written to {}\n", args.timeline);
  }
  if (!args.dump.empty()) {
    save_schedule_file(s, args.dump);
    fmt::print("schedule written to {}\n", args.dump);
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan", "Plan a collective on a topology, verify it, print its cost");
  args->collective.add_to(*cmd);
  cmd->add_option("--algo", args->algorithm, "algorithm name (see `cclab algorithms`) or auto")
      ->capture_default_str();
  cmd->add_option("--size", args->size, "buffer size (64MiB, 1GiB, ...)")->capture_default_str();
  cmd->add_option("--dump", args->dump, "write the schedule as JSON to FILE");
  cmd->add_option("--timeline", args->timeline,
                  "write the α-β timeline as a Chrome trace (Perfetto) to FILE");
  cmd->add_option("--ops", args->show_ops, "print every op of the first N ranks (-1: all)");
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace cclab::cli
