#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "real/nccl/reduce_kernels.cuh"

namespace cclab::real::cuda {
namespace {

template <typename T>
struct Convert;
template <>
struct Convert<float> {
  static __device__ float in(float x) { return x; }
  static __device__ float out(float x) { return x; }
};
template <>
struct Convert<__half> {
  static __device__ float in(__half x) { return __half2float(x); }
  static __device__ __half out(float x) { return __float2half_rn(x); }
};
template <>
struct Convert<__nv_bfloat16> {
  static __device__ float in(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __nv_bfloat16 out(float x) { return __float2bfloat16_rn(x); }
};

template <Op O>
__device__ float apply(float x, float y) {
  if constexpr (O == Op::Min) return fminf(x, y);
  if constexpr (O == Op::Max) return fmaxf(x, y);
  return x + y;  // Sum, and Avg before its final scaling
}

// 16 bytes of elements, loaded and stored as one vector.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

template <typename T, Op O>
__global__ void reduce_packed(Pack<T>* dst, const Pack<T>* a, const Pack<T>* b, std::uint64_t packs) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < packs;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const Pack<T> x = a[i], y = b[i];
    Pack<T> r;
#pragma unroll
    for (int k = 0; k < Pack<T>::kSize; ++k)
      r.v[k] = Convert<T>::out(apply<O>(Convert<T>::in(x.v[k]), Convert<T>::in(y.v[k])));
    dst[i] = r;
  }
}

template <typename T, Op O>
__global__ void reduce_scalar(T* dst, const T* a, const T* b, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    dst[i] = Convert<T>::out(apply<O>(Convert<T>::in(a[i]), Convert<T>::in(b[i])));
}

template <typename T>
__global__ void scale_scalar(T* data, float factor, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    data[i] = Convert<T>::out(Convert<T>::in(data[i]) * factor);
}

constexpr int kThreads = 512;

unsigned blocks_for(std::uint64_t work) {
  // Enough blocks to fill any current GPU several times over; the grid-stride loops cover the rest.
  return static_cast<unsigned>(std::clamp<std::uint64_t>((work + kThreads - 1) / kThreads, 1, 4096));
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

template <typename T, Op O>
void reduce_typed(cudaStream_t stream, void* dst, const void* a, const void* b, std::uint64_t n) {
  if (n == 0) return;
  std::uint64_t done = 0;
  if (aligned16(dst) && aligned16(a) && aligned16(b)) {
    const std::uint64_t packs = n / Pack<T>::kSize;
    if (packs > 0) {
      reduce_packed<T, O><<<blocks_for(packs), kThreads, 0, stream>>>(
          static_cast<Pack<T>*>(dst), static_cast<const Pack<T>*>(a), static_cast<const Pack<T>*>(b), packs);
    }
    done = packs * Pack<T>::kSize;
  }
  if (done < n) {
    reduce_scalar<T, O><<<blocks_for(n - done), kThreads, 0, stream>>>(
        static_cast<T*>(dst) + done, static_cast<const T*>(a) + done, static_cast<const T*>(b) + done,
        n - done);
  }
}

template <typename T>
void reduce_op(cudaStream_t stream, Op op, void* dst, const void* a, const void* b, std::uint64_t n) {
  switch (op) {
    case Op::Sum:
      return reduce_typed<T, Op::Sum>(stream, dst, a, b, n);
    case Op::Min:
      return reduce_typed<T, Op::Min>(stream, dst, a, b, n);
    case Op::Max:
      return reduce_typed<T, Op::Max>(stream, dst, a, b, n);
  }
}

}  // namespace

void launch_reduce(cudaStream_t stream, Type type, Op op, void* dst, const void* a, const void* b,
                   std::uint64_t count) {
  switch (type) {
    case Type::F32:
      return reduce_op<float>(stream, op, dst, a, b, count);
    case Type::F16:
      return reduce_op<__half>(stream, op, dst, a, b, count);
    case Type::BF16:
      return reduce_op<__nv_bfloat16>(stream, op, dst, a, b, count);
  }
}

void launch_scale(cudaStream_t stream, Type type, void* data, double factor, std::uint64_t count) {
  if (count == 0) return;
  const auto f = static_cast<float>(factor);
  switch (type) {
    case Type::F32:
      scale_scalar<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<float*>(data), f, count);
      break;
    case Type::F16:
      scale_scalar<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<__half*>(data), f, count);
      break;
    case Type::BF16:
      scale_scalar<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), f, count);
      break;
  }
}

}  // namespace cclab::real::cuda
