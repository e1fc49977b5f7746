#include "tests/harness.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "engine/exec/reduce_kernels.hpp"
#include "topology/presets.hpp"

namespace cclab::testing {

double input_value(int rank, std::uint64_t i) {
  return static_cast<double>((rank * 7 + i * 3 + i / 5) % 5);
}

namespace {

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return a + b;
    case ReduceOp::Min:
      return std::min(a, b);
    case ReduceOp::Max:
      return std::max(a, b);
  }
  return 0;
}

// Expected value of reducing element i over all ranks, rounded as the executor stores it.
double reduced_value(const CollectiveSpec& spec, std::uint64_t i) {
  double acc = input_value(0, i);
  for (int r = 1; r < spec.world_size; ++r)
    acc = combine(spec.op, acc, input_value(r, i));
  std::vector<std::byte> cell(dtype_size_bytes(spec.dtype));
  store_element(spec.dtype, cell.data(), 0, acc);
  if (spec.op == ReduceOp::Avg) scale(spec.dtype, cell.data(), 1.0 / spec.world_size, 1);
  return load_element(spec.dtype, cell.data(), 0);
}

}  // namespace

std::optional<std::string> run_and_check(const Schedule& s, bool in_place, double stall_timeout_s) {
  const CollectiveSpec& spec = s.spec;
  const int world = spec.world_size;
  std::vector<RankBuffers> buffers;
  for (int r = 0; r < world; ++r) {
    buffers.push_back(make_rank_buffers(spec, r, in_place));
    const std::uint64_t n = input_count(spec, r);
    const bool block = input_is_block(spec.collective);
    const std::uint64_t base = block ? partition(spec.count, world, r).offset : 0;
    // In place, an allgather's or gather's input is the rank's block of the output; every other input
    // starts the output.
    const std::size_t input_shift = block ? in_place_offset(spec, r) * dtype_size_bytes(spec.dtype) : 0;
    std::byte* input = in_place ? buffers[r].output.data() + input_shift : buffers[r].input.data();
    for (std::uint64_t i = 0; i < n; ++i)
      store_element(spec.dtype, input, i, input_value(r, base + i));
  }
  RunOptions options;
  options.in_place = in_place;
  options.timeout_s = stall_timeout_s;
  try {
    execute_reference(s, buffers, options);
  } catch (const std::exception& e) {
    return fmt::format("execution failed: {}", e.what());
  }
  for (int r = 0; r < world; ++r) {
    const ElemRange result = result_range(spec, r);
    const std::byte* out = buffers[r].output.data();
    if (in_place && output_is_block(spec.collective))
      out += in_place_offset(spec, r) * dtype_size_bytes(spec.dtype);
    for (std::uint64_t j = result.offset; j < result.end(); ++j) {
      double want = 0;
      switch (spec.collective) {
        case Collective::AllReduce:
        case Collective::Reduce:
          want = reduced_value(spec, j);
          break;
        case Collective::ReduceScatter:
          want = reduced_value(spec, partition(spec.count, world, r).offset + j);
          break;
        case Collective::AllGather:
        case Collective::Gather: {
          int owner = 0;
          while (partition(spec.count, world, owner).end() <= j)
            ++owner;
          want = input_value(owner, j);
          break;
        }
        case Collective::Broadcast:
          want = input_value(spec.root, j);
          break;
        case Collective::Scatter:
          want = input_value(spec.root, partition(spec.count, world, r).offset + j);
          break;
        case Collective::SendRecv:
          want = input_value((r + world - 1) % world, j);
          break;
        case Collective::AllToAll: {
          // Block b of the output is block r of rank b's input.
          const std::uint64_t block = alltoall_block(spec, 0).count, b = j / block;
          want = input_value(static_cast<int>(b), alltoall_block(spec, r).offset + j - b * block);
          break;
        }
      }
      const double got = load_element(spec.dtype, out, j);
      if (got != want) {
        return fmt::format("rank {} output[{}] = {}, expected {} ({}{})", r, j, got, want, describe(spec),
                           in_place ? ", in place" : "");
      }
    }
  }
  return std::nullopt;
}

topo::Topology nvlink_domain_topology(int world_size) {
  return topo::make_preset(fmt::format("dgx_h100:1,gpus={}", world_size));
}

topo::Topology flat_topology(int world_size) {
  topo::PcieServerParams p;
  p.nodes = world_size;
  p.gpus = 1;
  return topo::pcie_server(p);
}

}  // namespace cclab::testing
