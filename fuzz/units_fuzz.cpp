// libFuzzer harness: the unit-string parsers (common/units.hpp). Each parser either returns a value that is
// finite and in range, or throws a ConfigError; what it returns prints back (format_*) to a string that
// parses to the same value (exactly for sizes, to printing precision for bandwidths and times).
#include <cmath>

#include "common/units.hpp"
#include "fuzz/fuzz_check.hpp"

namespace {

using cclab::fuzz::load_or_clear_error;
using cclab::fuzz::require;

bool close(double a, double b) {
  return std::fabs(a - b) <= 1e-5 * std::fmax(std::fabs(a), std::fabs(b));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cclab::fuzz::as_text(data, size);
  if (auto bytes = load_or_clear_error("", [&] { return cclab::parse_size_bytes(text); })) {
    const std::string printed = cclab::format_size(*bytes);
    require(cclab::parse_size_bytes(printed) == *bytes, "a size does not survive format_size", text);
  }
  if (auto bandwidth = load_or_clear_error("", [&] { return cclab::parse_bandwidth_Bps(text); })) {
    require(std::isfinite(*bandwidth) && *bandwidth > 0, "a bandwidth that is not finite and positive", text);
    const std::string printed = cclab::format_bandwidth(*bandwidth);
    require(close(cclab::parse_bandwidth_Bps(printed), *bandwidth), "a bandwidth does not survive printing",
            text + " -> " + printed);
  }
  if (auto time = load_or_clear_error("", [&] { return cclab::parse_time_s(text); })) {
    require(std::isfinite(*time) && *time >= 0, "a time that is not finite and non-negative", text);
    const std::string printed = cclab::format_time(*time);
    require(close(cclab::parse_time_s(printed), *time), "a time does not survive printing",
            text + " -> " + printed);
  }
  return 0;
}
