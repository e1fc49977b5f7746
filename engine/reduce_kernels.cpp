#include "engine/reduce_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace cclab {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1f;
  std::uint32_t mantissa = h & 0x3ff;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);  // inf or nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exponent = 113;
    while (!(mantissa & 0x400))
      mantissa <<= 1, --exponent;
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t float_to_half(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000);
  const std::uint32_t abs = bits & 0x7fffffff;
  if (abs >= 0x7f800000) return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0);  // inf, nan
  if (abs >= 0x477ff000) return sign | 0x7c00;                                   // rounds to inf
  if (abs < 0x38800000) {                                                        // subnormal or zero
    if (abs < 0x33000000) return sign;
    const std::uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
    const int shift = 126 - static_cast<int>(abs >> 23);
    std::uint32_t half = mantissa >> (shift + 1);
    const std::uint32_t rest = mantissa & ((1u << (shift + 1)) - 1);
    const std::uint32_t halfway = 1u << shift;
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return sign | static_cast<std::uint16_t>(half);
  }
  std::uint32_t half = ((abs >> 13) - (112u << 10));
  const std::uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return sign | static_cast<std::uint16_t>(half);
}

float bf16_to_float(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // quiet nan
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>(bits >> 16);
}

namespace {

template <typename Combine>
void reduce_f32(float* dst, const float* a, const float* b, std::size_t n, Combine combine) {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = combine(a[i], b[i]);
}

template <typename Combine, typename Load, typename Store>
void reduce_16(std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b, std::size_t n,
               Combine combine, Load load, Store store) {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = store(combine(load(a[i]), load(b[i])));
}

template <typename Combine>
void reduce_typed(DType type, void* dst, const void* a, const void* b, std::size_t n, Combine combine) {
  switch (type) {
    case DType::F32:
      reduce_f32(static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b), n,
                 combine);
      return;
    case DType::F16:
      reduce_16(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(a),
                static_cast<const std::uint16_t*>(b), n, combine, half_to_float, float_to_half);
      return;
    case DType::BF16:
      reduce_16(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(a),
                static_cast<const std::uint16_t*>(b), n, combine, bf16_to_float, float_to_bf16);
      return;
  }
}

}  // namespace

void reduce(DType type, ReduceOp op, void* dst, const void* a, const void* b, std::size_t n) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      reduce_typed(type, dst, a, b, n, [](float x, float y) { return x + y; });
      return;
    case ReduceOp::Min:
      reduce_typed(type, dst, a, b, n, [](float x, float y) { return std::min(x, y); });
      return;
    case ReduceOp::Max:
      reduce_typed(type, dst, a, b, n, [](float x, float y) { return std::max(x, y); });
      return;
  }
}

void scale(DType type, void* dst, double factor, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    store_element(type, dst, i, load_element(type, dst, i) * factor);
}

double load_element(DType type, const void* base, std::size_t i) {
  switch (type) {
    case DType::F32:
      return static_cast<const float*>(base)[i];
    case DType::F16:
      return half_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::BF16:
      return bf16_to_float(static_cast<const std::uint16_t*>(base)[i]);
  }
  return 0;
}

void store_element(DType type, void* base, std::size_t i, double value) {
  const float f = static_cast<float>(value);
  switch (type) {
    case DType::F32:
      static_cast<float*>(base)[i] = f;
      return;
    case DType::F16:
      static_cast<std::uint16_t*>(base)[i] = float_to_half(f);
      return;
    case DType::BF16:
      static_cast<std::uint16_t*>(base)[i] = float_to_bf16(f);
      return;
  }
}

}  // namespace cclab
