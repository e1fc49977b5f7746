// `cclab plan`: plan a collective on a topology, verify it, and report steps, bytes, α-β time and bandwidth.
#include <algorithm>
#include <chrono>
#include <numeric>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "common/memory.hpp"
#include "common/units.hpp"
#include "engine/check/verified.hpp"
#include "engine/check/verifier.hpp"
#include "engine/ir/schedule_json.hpp"
#include "engine/ir/trace.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/model/cost.hpp"
#include "engine/plan/ring_search.hpp"
#include "engine/plan/selection.hpp"
#include "topology/presets.hpp"

namespace cclab::cli {
namespace {

struct PlanArgs {
  CollectiveArgs collective;
  std::string algorithm = "auto";
  std::string size = "1GiB";
  std::string dump;
  std::string dump_explicit;
  std::string timeline;
  int show_ops = 0;
  std::string verify = "patterns";
  std::string cost = "auto";
  std::string memory_budget;
};

// The other protocols' times, when more than one was costed: "ll 15.2us, ll128 30.1us".
std::string other_protocols(const std::vector<std::pair<Protocol, double>>& by_protocol, Protocol chosen) {
  std::string out;
  if (by_protocol.size() < 2) return out;
  for (const auto& [p, t] : by_protocol)
    if (p != chosen) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", to_string(p), format_time(t));
  return out;
}

void print_cost_table(const CollectiveSpec& spec, const std::vector<Candidate>& rows) {
  fmt::print("{:<18} {:<8} {:>12} {:>12} {:>12}  {}\n", "algorithm", "protocol", "time", "algbw(GB/s)",
             "busbw(GB/s)", "status");
  for (const Candidate& row : rows) {
    if (!row.support.ok) {
      fmt::print("{:<18} {:<8} {:>12} {:>12} {:>12}  {}: {}\n", row.algorithm, "-", "-", "-", "-",
                 row.pruned ? "cannot win" : "n/a", row.support.reason);
      continue;
    }
    const Bandwidths bw = nccl_tests_bandwidths(spec.collective, spec.world_size,
                                                static_cast<double>(spec.bytes()), row.time_s);
    const std::string others = other_protocols(row.by_protocol, row.protocol);
    fmt::print("{:<18} {:<8} {:>12} {:>12.2f} {:>12.2f}  {}\n", row.algorithm, to_string(row.protocol),
               format_time(row.time_s), bw.algbw_GBps, bw.busbw_GBps,
               others.empty() ? "" : "others: " + others);
  }
}

// Why an NCCL selection runs what it runs: NCCL's own estimates (its tuning model), least first, or why cclab
// took the cheapest by its model instead.
void print_nccl_pick(const Candidate& pick) {
  if (!pick.nccl_estimates.empty()) {
    auto rows = pick.nccl_estimates;
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& x, const auto& y) { return x.time_us < y.time_us; });
    fmt::print("NCCL's tuning model (NCCL 2.30, src/graph/tuning.cc), which decides what NCCL runs:\n");
    for (std::size_t i = 0; i < rows.size(); ++i)
      fmt::print("  {:<14} {:<8} {:>12.1f} us{}\n", rows[i].algorithm, to_string(rows[i].protocol),
                 rows[i].time_us, i == 0 ? "   <- NCCL's pick, costed above by cclab" : "");
  }
  if (!pick.nccl_note.empty())
    fmt::print("NCCL's pick: {}{}\n", pick.nccl_note,
               pick.nccl_estimates.empty() ? "; cclab takes the cheapest by its own model" : "");
  if (!pick.nccl_estimates.empty() || !pick.nccl_note.empty()) fmt::print("\n");
}

// Steps, bytes per rank and the α-β time, from the compact form; the timeline and the dump need the explicit
// form (within the memory budget).
void print_figures(const PlanArgs& args, const CompactSchedule& s, const topo::Topology& topology,
                   const CostParams& cost, const Candidate* costed) {
  std::optional<ProtocolRun> modelled;
  std::string others;
  if (costed) {  // `auto` costed the winner already
    modelled = ProtocolRun{costed->protocol, RunResult{}};
    modelled->run.total_s = costed->time_s;
    others = other_protocols(costed->by_protocol, costed->protocol);
  }
  // Costing is routing plus the recurrence: on a 16,384-GPU fabric that can be far more than the milliseconds
  // the plan took, so by default it is skipped past a bound (CostWork::estimated_s), with the reason.
  const CostWork work = estimate_cost_work(s);
  const double estimate_s = work.estimated_s();
  if (args.cost == "auto" && estimate_s > 20) {
    fmt::print(
        "steps, α-β time: skipped: about {:.0f} s of work ({} routes, {} recurrence cells, {} ops to walk); "
        "--cost always computes them\n",
        estimate_s, work.routes, work.ring_cells + work.tree_cells, work.walked_ops);
  } else if (args.cost != "never") {
    try {
      fmt::print("steps: {}\n", count_compact_steps(s));
      if (!modelled) {
        std::vector<ProtocolRun> runs = estimate_compact_cost_by_protocol(s, topology, cost);
        std::vector<std::pair<Protocol, double>> times;
        for (const ProtocolRun& r : runs)
          times.emplace_back(r.protocol, r.run.total_s);
        modelled = cheapest(std::move(runs));
        others = other_protocols(times, modelled->protocol);
      }
    } catch (const ConfigError& e) {
      fmt::print("steps, α-β time: skipped: {}\n", e.what());
    }
  }
  const auto bytes = compact_bytes_sent(s);
  const auto [min_bytes, max_bytes] = std::minmax_element(bytes.begin(), bytes.end());
  const double mean_bytes =
      std::accumulate(bytes.begin(), bytes.end(), 0.0) / std::max<std::size_t>(1, bytes.size());
  fmt::print("bytes sent per rank: mean {}, min {}, max {} (S = {})\n",
             format_size(static_cast<std::uint64_t>(mean_bytes)), format_size(*min_bytes),
             format_size(*max_bytes), format_size(s.spec.bytes()));
  if (modelled) {
    const double total_s = modelled->run.total_s;
    const Bandwidths bw = nccl_tests_bandwidths(s.spec.collective, s.spec.world_size,
                                                static_cast<double>(s.spec.bytes()), total_s);
    fmt::print("α-β time: {}   algbw {:.2f} GB/s   busbw {:.2f} GB/s   protocol {}{}\n", format_time(total_s),
               bw.algbw_GBps, bw.busbw_GBps, to_string(modelled->protocol),
               !others.empty() ? fmt::format(" (others: {})", others)
               : cost.protocol == Protocol::Auto &&
                       algorithm_family(s.spec.collective, s.algorithm) == AlgorithmFamily::P2p
                   ? " (NCCL's send/receive rule: LL up to 16 KiB a transfer per channel)"
                   : "");
  }
  if (!args.dump.empty()) {
    save_compact_file(s, args.dump);
    fmt::print("schedule written to {} (compact form)\n", args.dump);
  }
  if (args.timeline.empty() && args.dump_explicit.empty()) return;
  const Schedule x = to_explicit(s);
  if (!args.timeline.empty()) {
    write_chrome_trace_file(x, estimate_cost(x, topology, cost), args.timeline,
                            TraceOptions{"alpha-beta", 0});
    fmt::print("α-β timeline written to {}\n", args.timeline);
  }
  if (!args.dump_explicit.empty()) {
    save_schedule_file(x, args.dump_explicit);
    fmt::print("schedule written to {} (explicit form)\n", args.dump_explicit);
  }
}

// Why the rings are what they are: the channel count's reason and how node 0's part of each ring was found.
void print_ring_choice(const topo::Topology& topology, const PlanOptions& options,
                       const std::string& algorithm) {
  int channels = options.channels;
  if (channels > 0) {
    fmt::print("rings: {} channel{} (--channels)\n", channels, channels == 1 ? "" : "s");
  } else if (algorithm == "chain") {
    channels = 1;
  } else {
    std::string why;
    channels = planners::default_ring_channels(topology, &why);
    fmt::print("rings: {}\n", why);
  }
  const auto search = planners::search_rings(topology, channels);
  const std::size_t shown = std::min<std::size_t>(search.why.size(), 8);
  for (std::size_t i = 0; i < shown; ++i)
    fmt::print("  {}\n", search.why[i]);
  if (shown < search.why.size()) fmt::print("  ... ({} channels)\n", search.why.size());
}

VerifyDepth parse_depth(const std::string& text) {
  if (text == "patterns") return VerifyDepth::Patterns;
  if (text == "all") return VerifyDepth::All;
  throw ConfigError(fmt::format("--verify '{}': valid: patterns, all", text));
}

void run_plan(const PlanArgs& args) {
  if (!args.memory_budget.empty()) {
    try {
      set_memory_budget_bytes(parse_size_bytes(args.memory_budget));
    } catch (const Error& e) {
      throw ConfigError(fmt::format("--memory-budget: {}", e.what()));
    }
  }
  const VerifyDepth depth = parse_depth(args.verify);
  const topo::Topology topology = topo::load_topology(args.collective.topology);
  const CollectiveSpec spec = args.collective.spec(topology, args.size);
  const PlanOptions options = args.collective.plan_options();
  const CostParams cost = args.collective.cost_params();

  const auto t0 = std::chrono::steady_clock::now();
  PlannedCompact planned;
  std::optional<Candidate> costed;  // `auto`: the winner, costed by the table
  if (is_selection(spec.collective, args.algorithm)) {
    // The table's candidates are planned once; the winner is the table's own plan.
    Selector selector(cost);
    fmt::print("cost table ({}, α-β model, {}):\n", topology.name(), describe(spec));
    print_cost_table(spec, selector.auto_table(spec, topology, options, args.algorithm));
    fmt::print("\n");
    const Candidate& best = selector.choose(spec, topology, args.algorithm, options);
    if (!best.support.ok) throw ConfigError(best.support.reason);
    print_nccl_pick(best);
    planned.schedule = *best.schedule;
    costed = best;
  } else {
    planned = plan_compact(spec, topology, args.algorithm, options, cost);
    if (!planned.schedule) throw ConfigError(planned.reason);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const VerifiedSchedule verified = verify_compact(std::move(*planned.schedule), depth);
  const auto t2 = std::chrono::steady_clock::now();
  const CompactSchedule& s = verified.compact();

  fmt::print("plan: {}", format_compact_summary(s));
  if (s.algorithm == "ring" || s.algorithm == "chain") print_ring_choice(topology, options, s.algorithm);
  if (args.show_ops != 0) {
    // Only the ranks shown are expanded.
    Schedule shown = empty_schedule(s.spec, s.algorithm);
    const int ranks = args.show_ops < 0 ? s.world_size() : std::min(args.show_ops, s.world_size());
    for (int r = 0; r < ranks; ++r)
      shown.ranks[r] = expand(s, r);
    fmt::print("{}", format_schedule_ops(shown, ranks));
  }
  fmt::print("ops: {} in total (the explicit form, expanded on demand, one rank at a time)\n",
             count_explicit_ops(s));
  fmt::print("verify: OK, {} (plan {:.3f} s, verify {:.3f} s)\n",
             depth != VerifyDepth::All
                 ? "ring/tree/NVLSTree/SHARP/NVLS preconditions, explicit passes in full"
             : has_in_place_form(s.spec.collective) ? "every op, out-of-place and in-place"
                                                    : "every op, out-of-place (no in-place form)",
             std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
  print_figures(args, s, topology, cost, costed ? &*costed : nullptr);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan", "Plan a collective on a topology, verify it, print its cost");
  args->collective.add_to(*cmd);
  cmd->add_option("--algo", args->algorithm,
                  "algorithm name (see `cclab algorithms`), auto (the cheapest by cclab's model), nccl "
                  "(what NCCL's own tuning model picks among its algorithms), or an NCCL_ALGO value (Ring, "
                  "Tree, NVLS, NVLSTree, CollNetDirect, "
                  "CollNetChain, PAT; a list, or ^ "
                  "and the ones to leave out)")
      ->capture_default_str();
  cmd->add_option("--size", args->size, "buffer size (64MiB, 1GiB, ...)")->capture_default_str();
  cmd->add_option("--dump", args->dump,
                  "write the schedule as JSON to FILE (compact form: passes and lanes)");
  cmd->add_option("--dump-explicit", args->dump_explicit,
                  "write the schedule's explicit form (every op of every rank) as JSON to FILE");
  cmd->add_option("--timeline", args->timeline,
                  "write the α-β timeline as a Chrome trace (Perfetto) to FILE");
  cmd->add_option("--ops", args->show_ops, "print every op of the first N ranks (-1: all)");
  cmd->add_option("--verify", args->verify,
                  "patterns: O(C·P) checks of ring and tree passes, the full verifier on explicit ones; all: "
                  "expand every rank and verify every op (the oracle)")
      ->capture_default_str();
  cmd->add_option(
         "--cost", args->cost,
         "steps and α-β time: auto (skipped when they would take more than about 20 s), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_option("--memory-budget", args->memory_budget,
                  "refuse work that would materialize more than this (default: a quarter of RAM)");
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace cclab::cli
