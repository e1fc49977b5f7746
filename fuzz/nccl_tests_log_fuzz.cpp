// libFuzzer harness: nccl-tests logs (engine/measure/nccl_tests_log.hpp), the text table and the -J JSON.
// Each input either reads into rows whose sizes, times and bandwidths are numbers nccl-tests could print
// (finite, not negative), with a host and a GPU per device line and a preset for them or a ConfigError, or is
// refused with an error that names the file.
#include <cmath>

#include "common/error.hpp"
#include "engine/measure/compare.hpp"
#include "engine/measure/nccl_tests_log.hpp"
#include "fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cclab::fuzz::as_text(data, size);
  auto check = [&](const cclab::NcclTestsLog& log) {
    cclab::fuzz::require(!log.rows.empty(), "a log read without rows", text);
    cclab::fuzz::require(log.ranks >= 0, "a negative rank count", text);
    // A device line per rank, or fewer where a log keeps some of them (the ranks then count to the highest).
    cclab::fuzz::require(
        log.hosts.size() == log.gpus.size() && static_cast<int>(log.hosts.size()) <= log.ranks,
        "device lines whose hosts and GPUs do not match the ranks", text);
    // The machine the device lines describe: a preset spec, or a ConfigError saying why not.
    try {
      cclab::fuzz::require(!cclab::preset_for_log(log).empty(), "an empty preset for a log", text);
    } catch (const cclab::ConfigError&) {
    }
    for (const auto& row : log.rows) {
      cclab::fuzz::require(
          std::isfinite(row.time_us) && std::isfinite(row.algbw_GBps) && std::isfinite(row.busbw_GBps),
          "a row with a time or bandwidth that is not finite", text);
    }
  };
  if (auto log = cclab::fuzz::load_or_clear_error(
          "log.txt", [&] { return cclab::parse_nccl_tests_text(text, "log.txt"); })) {
    check(*log);
  }
  if (auto log = cclab::fuzz::load_or_clear_error(
          "log.json", [&] { return cclab::parse_nccl_tests_json(text, "log.json"); })) {
    check(*log);
  }
  return 0;
}
