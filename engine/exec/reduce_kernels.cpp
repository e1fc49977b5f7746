#include "engine/exec/reduce_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

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
    // value = mantissa x 2^(e - 150) = (mantissa >> shift) x 2^-24, the half subnormal's unit.
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
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

#if defined(__x86_64__)
// 16-bit types with AVX2 + F16C, eight elements per step: the portable loops convert element by element
// through branches the compiler cannot vectorize (f16 at about 5% of copy bandwidth, bf16 at 28%), which on a
// CPU transport makes every receive-reduce the bottleneck. Same rounding (nearest even) as the portable code.
template <ReduceOp Op>
__attribute__((target("avx2,f16c"))) std::size_t reduce_f16_avx2(std::uint16_t* dst, const std::uint16_t* a,
                                                                 const std::uint16_t* b, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    __m256 r;
    if constexpr (Op == ReduceOp::Min) {
      r = _mm256_min_ps(y, x);  // x when equal, as std::min(x, y)
    } else if constexpr (Op == ReduceOp::Max) {
      r = _mm256_max_ps(y, x);
    } else {
      r = _mm256_add_ps(x, y);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  return i;
}

template <ReduceOp Op>
__attribute__((target("avx2,f16c"))) std::size_t reduce_bf16_avx2(std::uint16_t* dst, const std::uint16_t* a,
                                                                  const std::uint16_t* b, std::size_t n) {
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x400000);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    // bf16 -> f32 is a 16-bit shift.
    const __m256 x = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))), 16));
    const __m256 y = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i))), 16));
    __m256 r;
    if constexpr (Op == ReduceOp::Min) {
      r = _mm256_min_ps(y, x);
    } else if constexpr (Op == ReduceOp::Max) {
      r = _mm256_max_ps(y, x);
    } else {
      r = _mm256_add_ps(x, y);
    }
    const __m256i bits = _mm256_castps_si256(r);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), one);
    const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(bias, lsb));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, abs_mask), inf);
    const __m256i kept = _mm256_blendv_epi8(rounded, _mm256_or_si256(bits, quiet), nan);
    const __m256i halves = _mm256_srli_epi32(kept, 16);
    // Pack 8 x u32 (< 65536) to 8 x u16: packus works per 128-bit lane, the permute puts the lanes together.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(halves, halves), 0b11011000);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_castsi256_si128(packed));
  }
  return i;
}

bool has_avx2_f16c() {
  static const bool yes = [] {
    // F16C from CPUID leaf 1 directly: clang's __builtin_cpu_supports does not know "f16c".
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    return f16c && __builtin_cpu_supports("avx2");
  }();
  return yes;
}

// Reduces the first multiple of 8 elements with AVX2 when the CPU has it; returns how many it did.
std::size_t reduce_16_fast(DType type, ReduceOp op, void* dst, const void* a, const void* b, std::size_t n) {
  if (!has_avx2_f16c() || type == DType::F32) return 0;
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  const bool half = type == DType::F16;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return half ? reduce_f16_avx2<ReduceOp::Sum>(d, x, y, n) : reduce_bf16_avx2<ReduceOp::Sum>(d, x, y, n);
    case ReduceOp::Min:
      return half ? reduce_f16_avx2<ReduceOp::Min>(d, x, y, n) : reduce_bf16_avx2<ReduceOp::Min>(d, x, y, n);
    case ReduceOp::Max:
      return half ? reduce_f16_avx2<ReduceOp::Max>(d, x, y, n) : reduce_bf16_avx2<ReduceOp::Max>(d, x, y, n);
  }
  return 0;
}
#else
std::size_t reduce_16_fast(DType, ReduceOp, void*, const void*, const void*, std::size_t) {
  return 0;
}
#endif

}  // namespace

void reduce_portable(DType type, ReduceOp op, void* dst, const void* a, const void* b, std::size_t n) {
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

void reduce(DType type, ReduceOp op, void* dst, const void* a, const void* b, std::size_t n) {
  const std::size_t done = reduce_16_fast(type, op, dst, a, b, n);
  if (done == n) return;
  const std::size_t elem = dtype_size_bytes(type);
  reduce_portable(type, op, static_cast<std::byte*>(dst) + done * elem,
                  static_cast<const std::byte*>(a) + done * elem,
                  static_cast<const std::byte*>(b) + done * elem, n - done);
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
