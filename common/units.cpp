#include "common/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

#include "common/error.hpp"

namespace cclab {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

// Splits "25GB/s" into 25 and "GB/s". The number may use a decimal point or an exponent.
std::pair<double, std::string_view> split_number(std::string_view text, std::string_view what,
                                                 std::string_view valid) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || text.empty()) {
    throw ConfigError(
        fmt::format("'{}' is not a {}; expected a number with a unit such as {}", clip(text), what, valid));
  }
  std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  while (!suffix.empty() && suffix.front() == ' ')
    suffix.remove_prefix(1);
  if (!std::isfinite(value) || value < 0) {
    throw ConfigError(
        fmt::format("'{}' is not a {}: it must be a finite, non-negative number", clip(text), what));
  }
  return {value, suffix};
}

template <std::size_t N>
double apply_suffix(std::string_view text, std::string_view what, std::string_view valid,
                    const std::array<Suffix, N>& suffixes) {
  auto [value, suffix] = split_number(text, what, valid);
  for (const Suffix& s : suffixes) {
    if (suffix != s.text) continue;
    // Found by the units fuzzer: "1e300GiB/s" overflowed to infinity and was accepted.
    if (!std::isfinite(value * s.factor))
      throw ConfigError(fmt::format("'{}' is too large for a {}", clip(text), what));
    return value * s.factor;
  }
  throw ConfigError(fmt::format("'{}' has an unknown unit '{}' for a {}; valid units: {}", clip(text),
                                clip(suffix), what, valid));
}

constexpr std::array kSizeSuffixes{Suffix{"", 1},
                                   Suffix{"B", 1},
                                   Suffix{"KiB", 1024.0},
                                   Suffix{"MiB", 1048576.0},
                                   Suffix{"GiB", 1073741824.0},
                                   Suffix{"TiB", 1099511627776.0},
                                   Suffix{"KB", 1e3},
                                   Suffix{"MB", 1e6},
                                   Suffix{"GB", 1e9},
                                   Suffix{"TB", 1e12},
                                   Suffix{"K", 1024.0},
                                   Suffix{"M", 1048576.0},
                                   Suffix{"G", 1073741824.0}};
constexpr std::array kBandwidthSuffixes{
    Suffix{"", 1},           Suffix{"B/s", 1},         Suffix{"KB/s", 1e3},
    Suffix{"MB/s", 1e6},     Suffix{"GB/s", 1e9},      Suffix{"TB/s", 1e12},
    Suffix{"bps", 0.125},    Suffix{"Kbps", 1e3 / 8},  Suffix{"Mbps", 1e6 / 8},
    Suffix{"Gbps", 1e9 / 8}, Suffix{"Tbps", 1e12 / 8}, Suffix{"GiB/s", 1073741824.0}};
constexpr std::array kTimeSuffixes{Suffix{"", 1},      Suffix{"s", 1},     Suffix{"ms", 1e-3},
                                   Suffix{"us", 1e-6}, Suffix{"ns", 1e-9}, Suffix{"ps", 1e-12}};

std::string trim_number(double value) {
  std::string text = fmt::format("{:.6g}", value);
  return text;
}

}  // namespace

std::uint64_t parse_size_bytes(std::string_view text) {
  constexpr std::string_view valid = "4096, 4096B, 64KiB, 64MiB, 1GiB, 1MB, 1GB";
  double bytes = apply_suffix(text, "size", valid, kSizeSuffixes);
  if (bytes > 1.8e19 || bytes != std::floor(bytes)) {
    throw ConfigError(fmt::format("'{}' is not a whole number of bytes", clip(text)));
  }
  return static_cast<std::uint64_t>(bytes);
}

double parse_bandwidth_Bps(std::string_view text) {
  double bandwidth =
      apply_suffix(text, "bandwidth", "200Gbps, 25GB/s, 100Mbps, 1e9 (bytes/s)", kBandwidthSuffixes);
  if (bandwidth <= 0) throw ConfigError(fmt::format("bandwidth '{}' must be positive", clip(text)));
  return bandwidth;
}

double parse_time_s(std::string_view text) {
  return apply_suffix(text, "time", "2us, 1.5ms, 10ns, 1s, 0.5 (seconds)", kTimeSuffixes);
}

std::string format_size(std::uint64_t bytes) {
  constexpr std::array<std::pair<std::uint64_t, std::string_view>, 4> units{
      {{1ULL << 40, "TiB"}, {1ULL << 30, "GiB"}, {1ULL << 20, "MiB"}, {1ULL << 10, "KiB"}}};
  for (auto [factor, name] : units) {
    if (bytes >= factor && bytes % factor == 0) return fmt::format("{}{}", bytes / factor, name);
  }
  return fmt::format("{}B", bytes);
}

std::string format_bandwidth(double bandwidth_Bps) {
  if (bandwidth_Bps >= 1e9) return trim_number(bandwidth_Bps / 1e9) + "GB/s";
  if (bandwidth_Bps >= 1e6) return trim_number(bandwidth_Bps / 1e6) + "MB/s";
  return trim_number(bandwidth_Bps) + "B/s";
}

std::string format_time(double seconds) {
  if (seconds == 0) return "0s";
  if (seconds >= 1) return trim_number(seconds) + "s";
  if (seconds >= 1e-3) return trim_number(seconds * 1e3) + "ms";
  if (seconds >= 1e-6) return trim_number(seconds * 1e6) + "us";
  return trim_number(seconds * 1e9) + "ns";
}

}  // namespace cclab
