#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace cclab {
namespace {

TEST(Units, Sizes) {
  EXPECT_EQ(parse_size_bytes("64MiB"), 64ULL << 20);
  EXPECT_EQ(parse_size_bytes("1GiB"), 1ULL << 30);
  EXPECT_EQ(parse_size_bytes("1MB"), 1000000ULL);
  EXPECT_EQ(parse_size_bytes("4096"), 4096ULL);
  EXPECT_EQ(parse_size_bytes("8B"), 8ULL);
  EXPECT_EQ(parse_size_bytes("1G"), 1ULL << 30);  // nccl-tests style -e 1G
  EXPECT_THROW(parse_size_bytes("64XB"), ConfigError);
  EXPECT_THROW(parse_size_bytes("abc"), ConfigError);
  EXPECT_THROW(parse_size_bytes("1.5B"), ConfigError);
  EXPECT_THROW(parse_size_bytes("-1"), ConfigError);
}

TEST(Units, Bandwidths) {
  EXPECT_DOUBLE_EQ(parse_bandwidth_Bps("200Gbps"), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_Bps("25GB/s"), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_Bps("100Mbps"), 12.5e6);
  EXPECT_THROW(parse_bandwidth_Bps("0Gbps"), ConfigError);
  EXPECT_THROW(parse_bandwidth_Bps("25 furlongs"), ConfigError);
  // Found by fuzz/units_fuzz: the unit's factor overflowed a finite number to infinity.
  EXPECT_THROW(parse_bandwidth_Bps("1e300GiB/s"), ConfigError);
  try {
    parse_bandwidth_Bps(std::string(5000, '7') + "x");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u);  // the text is quoted clipped
  }
}

TEST(Units, Times) {
  EXPECT_DOUBLE_EQ(parse_time_s("2us"), 2e-6);
  EXPECT_DOUBLE_EQ(parse_time_s("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_time_s("10ns"), 1e-8);
  EXPECT_DOUBLE_EQ(parse_time_s("0.5"), 0.5);
  EXPECT_THROW(parse_time_s("2 fortnights"), ConfigError);
}

TEST(Units, FormatParsesBack) {
  for (std::uint64_t bytes : {0ULL, 1ULL, 1000ULL, 1ULL << 20, 3ULL << 30, 12345ULL})
    EXPECT_EQ(parse_size_bytes(format_size(bytes)), bytes) << format_size(bytes);
  EXPECT_EQ(format_bandwidth(25e9), "25GB/s");
  EXPECT_EQ(format_time(2e-6), "2us");
}

}  // namespace
}  // namespace cclab
