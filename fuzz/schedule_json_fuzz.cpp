// libFuzzer harness: the schedule JSON loaders (both forms) and the verifier (engine/ir/schedule_json.hpp,
// engine/check/verifier.hpp) — the path of `cclab verify FILE`. An input is either refused with an error
// naming "fuzz.json", or it loads; then it saves to JSON that loads back to the same JSON, the verifier
// answers without throwing, and when the verifier accepts a small schedule, the reference executor must
// compute the collective's exact result with it, out of place and in place. A schedule the verifier passes
// but that computes a wrong answer (or stalls) is a verifier bug.
#include <fmt/format.h>

#include "engine/check/verified.hpp"
#include "engine/check/verifier.hpp"
#include "engine/ir/schedule_json.hpp"
#include "fuzz/fuzz_check.hpp"
#include "tests/harness.hpp"

namespace {

using cclab::fuzz::require;

constexpr int kMaxExecutedRanks = 8;
constexpr std::uint64_t kMaxExecutedCount = 1 << 12;
constexpr std::size_t kMaxExecutedOps = 1 << 12;
// A schedule may declare more scratch than its ops use (valid), which the executor allocates: a loaded
// 555-trillion-element scratch ran the harness out of memory.
constexpr std::uint64_t kMaxExecutedScratch = 1 << 16;
constexpr double kStallTimeout_s = 5;

// Loads `text` with `load`, or it is refused with an error naming fuzz.json; what loads saves (with `save`)
// to JSON that loads back to the same JSON.
template <typename Load, typename Save>
auto load_round_trip(const std::string& text, Load load, Save save)
    -> std::optional<decltype(load(text, ""))> {
  auto schedule = cclab::fuzz::load_or_clear_error("fuzz.json", [&] { return load(text, "fuzz.json"); });
  if (!schedule) return std::nullopt;
  const std::string saved = save(*schedule);
  auto again = cclab::fuzz::load_or_clear_error("saved.json", [&] { return load(saved, "saved.json"); });
  require(again.has_value(), "a saved schedule does not load", saved.substr(0, 2000));
  require(save(*again) == saved, "a saved schedule loads as a different schedule");
  return schedule;
}

// Runs a schedule the verifier accepted on the reference executor: it must compute the exact result. Only
// schedules small enough to run quickly are run.
void require_exact(const cclab::Schedule& schedule) {
  const auto& spec = schedule.spec;
  if (spec.world_size > kMaxExecutedRanks || spec.count > kMaxExecutedCount ||
      schedule.num_ops() > kMaxExecutedOps)
    return;
  for (const cclab::Program& rank : schedule.ranks)
    if (rank.scratch_count > kMaxExecutedScratch) return;
  for (bool in_place : {false, true}) {
    if (in_place && !cclab::has_in_place_form(spec.collective)) continue;  // alltoall: out of place only
    const auto wrong = cclab::testing::run_and_check(schedule, in_place, kStallTimeout_s);
    require(!wrong,
            fmt::format("the verifier accepted a schedule that computes a wrong result ({})",
                        in_place ? "in place" : "out of place"),
            wrong.value_or(""));
  }
}

// The compact form: loads or is refused; saves to JSON that loads back to the same JSON; the compact checks
// answer without throwing; a small schedule they pass is expanded and fully verified, and when the full
// verifier accepts it the reference executor must compute the exact result.
int compact_input(const std::string& text) {
  auto schedule = load_round_trip(
      text, [](const std::string& t, const char* source) { return cclab::compact_from_json(t, source); },
      [](const cclab::CompactSchedule& s) { return cclab::compact_to_json(s); });
  if (!schedule) return 0;
  std::optional<std::string> problem;
  try {
    problem = cclab::check_compact(*schedule);
  } catch (const std::exception& e) {
    cclab::fuzz::fail("the compact checks threw instead of answering", e.what());
  }
  if (problem) return 0;
  const auto& spec = schedule->spec;
  if (spec.world_size > kMaxExecutedRanks || spec.count > kMaxExecutedCount ||
      cclab::count_explicit_ops(*schedule) > kMaxExecutedOps)
    return 0;
  try {
    problem = cclab::check_compact(*schedule, cclab::VerifyDepth::All);
  } catch (const std::exception& e) {
    cclab::fuzz::fail("the full check of a small compact schedule threw", e.what());
  }
  if (problem) return 0;
  require_exact(cclab::to_explicit(*schedule));
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cclab::fuzz::as_text(data, size);
  if (cclab::is_compact_json(text)) return compact_input(text);
  auto schedule = load_round_trip(
      text, [](const std::string& t, const char* source) { return cclab::schedule_from_json(t, source); },
      [](const cclab::Schedule& s) { return cclab::schedule_to_json(s); });
  if (!schedule) return 0;

  std::optional<std::string> problem;
  try {
    problem = cclab::verify(*schedule);
  } catch (const std::exception& e) {
    cclab::fuzz::fail("the verifier threw instead of answering", e.what());
  }
  if (problem) return 0;
  require_exact(*schedule);
  return 0;
}
