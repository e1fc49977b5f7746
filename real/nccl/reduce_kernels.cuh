// CUDA reduction kernels of the NCCL transport: dst = a (op) b and in-place scaling, for f32, f16 and bf16,
// computed in f32 and rounded to nearest even, as the host kernels (engine/exec/reduce_kernels.hpp) and NCCL do.
// Each thread moves 16 bytes per access when all pointers are 16-byte aligned (vector loads are what reach
// copy bandwidth); a scalar loop handles the rest.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cclab::real::cuda {

// Mirrors of cclab::DType and cclab::ReduceOp: this header is compiled by nvcc as C++17, which the engine's
// C++20 headers are not.
enum class Type { F32, F16, BF16 };
enum class Op { Sum, Min, Max };  // avg is a sum, scaled at the end

// Enqueue on `stream`; launch errors come back from cudaGetLastError (the caller checks).
void launch_reduce(cudaStream_t stream, Type type, Op op, void* dst, const void* a, const void* b,
                   std::uint64_t count);
void launch_scale(cudaStream_t stream, Type type, void* data, double factor, std::uint64_t count);

}  // namespace cclab::real::cuda
