#include "real/check_data.hpp"

#include <algorithm>
#include <cmath>

#include "engine/exec/reduce_kernels.hpp"

namespace cclab::real {

double input_value(int rank, std::uint64_t global_index) {
  return static_cast<double>((static_cast<std::uint64_t>(rank) * 7 + global_index * 3) % 9);
}

void fill_input(const CollectiveSpec& spec, int rank, void* input, void* output, bool in_place) {
  // Allgather and gather inputs are the rank's block of the global vector; the others span all of it.
  const bool block = input_is_block(spec.collective);
  const std::uint64_t first = block ? partition(spec.count, spec.world_size, rank).offset : 0;
  const std::uint64_t n = input_count(spec, rank);
  void* base = in_place ? output : input;
  const std::uint64_t at = in_place && block ? first : 0;
  for (std::uint64_t i = 0; i < n; ++i)
    store_element(spec.dtype, base, at + i, input_value(rank, first + i));
}

namespace {

double combined(const CollectiveSpec& spec, std::uint64_t g) {
  double acc = input_value(0, g);
  for (int q = 1; q < spec.world_size; ++q) {
    const double v = input_value(q, g);
    acc = spec.op == ReduceOp::Min ? std::min(acc, v) : spec.op == ReduceOp::Max ? std::max(acc, v) : acc + v;
  }
  return spec.op == ReduceOp::Avg ? acc / spec.world_size : acc;
}

double expected(const CollectiveSpec& spec, int rank, std::uint64_t j) {
  switch (spec.collective) {
    case Collective::AllReduce:
    case Collective::Reduce:
      return combined(spec, j);
    case Collective::ReduceScatter:
      return combined(spec, partition(spec.count, spec.world_size, rank).offset + j);
    case Collective::AllGather:
    case Collective::Gather:
      for (int q = 0; q < spec.world_size; ++q) {
        const ElemRange block = partition(spec.count, spec.world_size, q);
        if (j < block.end()) return input_value(q, j);
      }
      return 0;
    case Collective::Broadcast:
      return input_value(spec.root, j);
    case Collective::Scatter:
      return input_value(spec.root, partition(spec.count, spec.world_size, rank).offset + j);
    case Collective::SendRecv:
      return input_value((rank + spec.world_size - 1) % spec.world_size, j);
    case Collective::AllToAll: {
      // Block b of the output is block `rank` of rank b's input.
      const std::uint64_t block = alltoall_block(spec, 0).count;
      if (block == 0) return 0;
      const std::uint64_t b = j / block;
      return input_value(static_cast<int>(b), alltoall_block(spec, rank).offset + j - b * block);
    }
  }
  return 0;
}

// Avg is the only result that is not an integer: allow the dtype's rounding of it.
double tolerance(DType t) {
  return t == DType::F32 ? 1e-6 : t == DType::F16 ? 1e-3 : 8e-3;
}

}  // namespace

std::uint64_t count_wrong(const CollectiveSpec& spec, int rank, const void* output, bool in_place) {
  const ElemRange result = result_range(spec, rank);
  const std::uint64_t base = in_place && output_is_block(spec.collective) ? in_place_offset(spec, rank) : 0;
  const double tol = spec.op == ReduceOp::Avg ? tolerance(spec.dtype) : 0.0;
  std::uint64_t wrong = 0;
  for (std::uint64_t j = 0; j < result.count; ++j) {
    const double want = expected(spec, rank, result.offset + j);
    const double got = load_element(spec.dtype, output, base + result.offset + j);
    if (!(std::abs(got - want) <= tol * std::max(1.0, std::abs(want)))) ++wrong;
  }
  return wrong;
}

}  // namespace cclab::real
