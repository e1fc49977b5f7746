// Element conversions and reductions on host memory, for the executor on host transports (MPI, threads).
// f16 and bf16 are reduced in f32 and rounded back (round to nearest even), as NCCL does on GPUs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/ir/collective.hpp"

namespace cclab {

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);
float bf16_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);

// dst[i] = a[i] (op) b[i] for n elements of `type`; Avg sums (the caller divides at the end, see scale()).
// dst may alias a or b. f16 and bf16 use AVX2 + F16C when the CPU has them (eight elements per step).
void reduce(DType type, ReduceOp op, void* dst, const void* a, const void* b, std::size_t n);

// The same without the AVX2/F16C path for f16 and bf16 (tests compare the two).
void reduce_portable(DType type, ReduceOp op, void* dst, const void* a, const void* b, std::size_t n);

// dst[i] *= factor (used to finish Avg).
void scale(DType type, void* dst, double factor, std::size_t n);

// Element i of a buffer as double / set it from double (tests and correctness checks).
double load_element(DType type, const void* base, std::size_t i);
void store_element(DType type, void* base, std::size_t i, double value);

}  // namespace cclab
