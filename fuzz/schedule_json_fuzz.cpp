// libFuzzer harness: the schedule JSON loader and the verifier (engine/schedule_json.hpp,
// engine/verifier.hpp) — the path of `cclab verify FILE`. An input is either refused with an error naming
// "fuzz.json", or it loads; then it saves to JSON that loads back to the same JSON, the verifier answers
// without throwing, and when the verifier accepts a small schedule, the reference executor must compute the
// collective's exact result with it, out of place and in place. A schedule the verifier passes but that
// computes a wrong answer (or stalls) is a verifier bug.
#include <fmt/format.h>

#include "engine/schedule_json.hpp"
#include "engine/verifier.hpp"
#include "fuzz/fuzz_check.hpp"
#include "tests/harness.hpp"

namespace {

using cclab::fuzz::require;

constexpr int kMaxExecutedRanks = 8;
constexpr std::uint64_t kMaxExecutedCount = 1 << 12;
constexpr std::size_t kMaxExecutedOps = 1 << 12;
constexpr double kStallTimeout_s = 5;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cclab::fuzz::as_text(data, size);
  auto schedule = cclab::fuzz::load_or_clear_error(
      "fuzz.json", [&] { return cclab::schedule_from_json(text, "fuzz.json"); });
  if (!schedule) return 0;
  const std::string saved = cclab::schedule_to_json(*schedule);
  auto again = cclab::fuzz::load_or_clear_error(
      "saved.json", [&] { return cclab::schedule_from_json(saved, "saved.json"); });
  require(again.has_value(), "a saved schedule does not load", saved.substr(0, 2000));
  require(cclab::schedule_to_json(*again) == saved, "a saved schedule loads as a different schedule");

  std::optional<std::string> problem;
  try {
    problem = cclab::verify(*schedule);
  } catch (const std::exception& e) {
    cclab::fuzz::fail("the verifier threw instead of answering", e.what());
  }
  if (problem) return 0;
  const auto& spec = schedule->spec;
  if (spec.world_size > kMaxExecutedRanks || spec.count > kMaxExecutedCount ||
      schedule->num_ops() > kMaxExecutedOps)
    return 0;
  for (bool in_place : {false, true}) {
    const auto wrong = cclab::testing::run_and_check(*schedule, in_place, kStallTimeout_s);
    require(!wrong,
            fmt::format("the verifier accepted a schedule that computes a wrong result ({})",
                        in_place ? "in place" : "out of place"),
            wrong.value_or(""));
  }
  return 0;
}
