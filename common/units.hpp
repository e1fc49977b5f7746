// Unit strings are parsed once, at load, into bytes, bytes per second and seconds; they are printed with
// units. Accepted forms (case-sensitive suffixes, as users write them on spec sheets):
//   sizes:      "64MiB", "1GiB", "512KiB", "1MB" (1e6), "4096B", "4096" (bytes)
//   bandwidths: "200Gbps", "25GB/s", "100Mbps", "1e9" (bytes/s); bits use 1e3 steps, /8 to bytes
//   times:      "2us", "1.5ms", "10ns", "1s", "0.5" (seconds)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cclab {

// Each parser throws ConfigError naming the string and the valid forms.
std::uint64_t parse_size_bytes(std::string_view text);
double parse_bandwidth_Bps(std::string_view text);
double parse_time_s(std::string_view text);

// Human-readable forms that parse back to the same value (up to printing precision).
std::string format_size(std::uint64_t bytes);        // "64MiB", "1000B"
std::string format_bandwidth(double bandwidth_Bps);  // "25GB/s"
std::string format_time(double seconds);             // "2us"

}  // namespace cclab
