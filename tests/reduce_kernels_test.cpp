// Element conversions against known encodings, and the vectorized f16/bf16 kernels against the portable
// ones on every kind of value (normal, subnormal, zero, infinity, NaN, ties), at lengths with and without a
// tail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "engine/exec/reduce_kernels.hpp"

namespace cclab {
namespace {

TEST(Conversions, KnownEncodings) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);                          // largest half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);                          // rounds to infinity
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);             // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie: to even (down)
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie: to even (up)
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie: to even
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
}

std::vector<std::uint16_t> all_kinds(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> v(n);
  const std::uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x03ff, 0x7c00,
                                    0xfc00, 0x7e00, 0x3c00, 0x7bff, 0x7f80};
  for (std::size_t i = 0; i < n; ++i)
    v[i] = i % 5 == 0 ? specials[i / 5 % std::size(specials)] : static_cast<std::uint16_t>(rng());
  return v;
}

bool same(DType t, std::uint16_t x, std::uint16_t y) {
  const float a = t == DType::F16 ? half_to_float(x) : bf16_to_float(x);
  const float b = t == DType::F16 ? half_to_float(y) : bf16_to_float(y);
  return x == y || (std::isnan(a) && std::isnan(b));  // NaN payloads may differ, NaN-ness may not
}

TEST(Kernels, VectorizedSixteenBitMatchesPortable) {
  for (const DType t : {DType::F16, DType::BF16}) {
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
      for (const std::size_t n : {std::size_t{1}, std::size_t{8}, std::size_t{13}, std::size_t{4099}}) {
        const auto a = all_kinds(n, 1), b = all_kinds(n, 2);
        std::vector<std::uint16_t> fast(n), portable(n);
        reduce(t, op, fast.data(), a.data(), b.data(), n);
        reduce_portable(t, op, portable.data(), a.data(), b.data(), n);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < n; ++i)
          differ += !same(t, fast[i], portable[i]);
        EXPECT_EQ(differ, 0u) << to_string(t) << " " << to_string(op) << " n=" << n;
      }
    }
  }
}

TEST(Kernels, InPlaceAliasing) {
  std::vector<float> a(37, 1.5f), b(37, 2.0f);
  reduce(DType::F32, ReduceOp::Sum, a.data(), a.data(), b.data(), a.size());
  EXPECT_EQ(a[36], 3.5f);
  std::vector<std::uint16_t> h(21, float_to_half(1.0f));
  reduce(DType::F16, ReduceOp::Sum, h.data(), h.data(), h.data(), h.size());
  EXPECT_EQ(h[20], float_to_half(2.0f));
}

}  // namespace
}  // namespace cclab
