// The NCCL transport's CUDA reduction kernels against the host kernels, bitwise: every element type, sum /
// min / max, scaling, sizes around the 16-byte vector width, misaligned pointers (the scalar path) and a
// destination aliasing an operand. Needs an NVIDIA GPU; every test is skipped (and says so) without one.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "engine/exec/reduce_kernels.hpp"
#include "real/nccl/reduce_kernels.cuh"

namespace cclab {
namespace {

bool have_gpu() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

real::cuda::Type kernel_type(DType t) {
  return t == DType::F32   ? real::cuda::Type::F32
         : t == DType::F16 ? real::cuda::Type::F16
                           : real::cuda::Type::BF16;
}

real::cuda::Op kernel_op(ReduceOp op) {
  return op == ReduceOp::Min   ? real::cuda::Op::Min
         : op == ReduceOp::Max ? real::cuda::Op::Max
                               : real::cuda::Op::Sum;
}

std::vector<std::byte> random_elements(DType t, std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n * dtype_size_bytes(t));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-100, 100);
  for (std::size_t i = 0; i < n; ++i)
    store_element(t, v.data(), i, value(rng));
  return v;
}

struct DeviceBuffer {
  explicit DeviceBuffer(std::size_t bytes) { EXPECT_EQ(cudaMalloc(&data, bytes + 64), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(data); }
  std::byte* at(std::size_t offset) const { return static_cast<std::byte*>(data) + offset; }
  void* data = nullptr;
};

class CudaKernels : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device: the CUDA kernels are checked on GPU machines";
  }
};

TEST_P(CudaKernels, ReduceMatchesHostBitwise) {
  const DType t = GetParam();
  const std::size_t elem = dtype_size_bytes(t);
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
    for (const std::size_t n : {1UL, 7UL, 8UL, 9UL, 4099UL, 1000003UL}) {
      for (const std::size_t misalign : {0UL, 1UL}) {  // elements: 1 breaks 16-byte alignment
        SCOPED_TRACE(testing::Message() << to_string(op) << " n=" << n << " misalign=" << misalign);
        const auto a = random_elements(t, n, 1), b = random_elements(t, n, 2);
        std::vector<std::byte> expected(n * elem), got(n * elem);
        reduce(t, op, expected.data(), a.data(), b.data(), n);
        const std::size_t off = misalign * elem;
        DeviceBuffer da(n * elem), db(n * elem), dc(n * elem);
        ASSERT_EQ(cudaMemcpy(da.at(off), a.data(), n * elem, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(db.at(off), b.data(), n * elem, cudaMemcpyHostToDevice), cudaSuccess);
        real::cuda::launch_reduce(nullptr, kernel_type(t), kernel_op(op), dc.at(off), da.at(off), db.at(off),
                                  n);
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got.data(), dc.at(off), n * elem, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * elem), 0);
        // In place: the destination is the first operand, as the executor's local reduce uses it.
        real::cuda::launch_reduce(nullptr, kernel_type(t), kernel_op(op), da.at(off), da.at(off), db.at(off),
                                  n);
        ASSERT_EQ(cudaMemcpy(got.data(), da.at(off), n * elem, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * elem), 0);
      }
    }
  }
}

TEST_P(CudaKernels, ScaleMatchesHost) {
  const DType t = GetParam();
  const std::size_t elem = dtype_size_bytes(t), n = 100003;
  auto data = random_elements(t, n, 3);
  std::vector<std::byte> got(n * elem);
  DeviceBuffer d(n * elem);
  ASSERT_EQ(cudaMemcpy(d.data, data.data(), n * elem, cudaMemcpyHostToDevice), cudaSuccess);
  real::cuda::launch_scale(nullptr, kernel_type(t), d.data, 0.25, n);  // a power of two: exact everywhere
  ASSERT_EQ(cudaMemcpy(got.data(), d.data, n * elem, cudaMemcpyDeviceToHost), cudaSuccess);
  scale(t, data.data(), 0.25, n);
  EXPECT_EQ(std::memcmp(got.data(), data.data(), n * elem), 0);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CudaKernels, ::testing::Values(DType::F32, DType::F16, DType::BF16),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace cclab
