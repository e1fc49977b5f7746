#include "engine/ir/collective.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/units.hpp"

namespace cclab {
namespace {

constexpr std::array<std::pair<Collective, std::string_view>, 9> kCollectives{
    {{Collective::AllReduce, "allreduce"},
     {Collective::ReduceScatter, "reduce_scatter"},
     {Collective::AllGather, "allgather"},
     {Collective::Broadcast, "broadcast"},
     {Collective::Reduce, "reduce"},
     {Collective::AllToAll, "alltoall"},
     {Collective::Gather, "gather"},
     {Collective::Scatter, "scatter"},
     {Collective::SendRecv, "sendrecv"}}};
constexpr std::array<std::pair<DType, std::string_view>, 3> kDTypes{
    {{DType::F32, "f32"}, {DType::F16, "f16"}, {DType::BF16, "bf16"}}};
constexpr std::array<std::pair<ReduceOp, std::string_view>, 4> kReduceOps{
    {{ReduceOp::Sum, "sum"}, {ReduceOp::Avg, "avg"}, {ReduceOp::Min, "min"}, {ReduceOp::Max, "max"}}};

}  // namespace

std::string_view to_string(Collective c) {
  return name_of(kCollectives, c);
}
std::string_view to_string(DType t) {
  return name_of(kDTypes, t);
}
std::string_view to_string(ReduceOp op) {
  return name_of(kReduceOps, op);
}
std::optional<Collective> parse_collective(std::string_view text) {
  return value_of(kCollectives, text);
}
std::optional<DType> parse_dtype(std::string_view text) {
  return value_of(kDTypes, text);
}
std::optional<ReduceOp> parse_reduce_op(std::string_view text) {
  return value_of(kReduceOps, text);
}

std::size_t dtype_size_bytes(DType t) {
  return t == DType::F32 ? 4 : 2;
}

ElemRange partition(std::uint64_t count, int parts, int index) {
  const std::uint64_t p = static_cast<std::uint64_t>(parts), i = static_cast<std::uint64_t>(index);
  const std::uint64_t base = count / p, extra = count % p;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

bool is_rooted(Collective c) {
  return c == Collective::Broadcast || c == Collective::Reduce || c == Collective::Gather ||
         c == Collective::Scatter;
}

bool input_is_block(Collective c) {
  return c == Collective::AllGather || c == Collective::Gather;
}

bool output_is_block(Collective c) {
  return c == Collective::ReduceScatter || c == Collective::Scatter;
}

std::uint64_t input_count(const CollectiveSpec& spec, int rank) {
  if (input_is_block(spec.collective)) return partition(spec.count, spec.world_size, rank).count;
  return spec.count;
}

std::uint64_t output_count(const CollectiveSpec& spec, int rank) {
  if (output_is_block(spec.collective)) return partition(spec.count, spec.world_size, rank).count;
  return spec.count;
}

ElemRange result_range(const CollectiveSpec& spec, int rank) {
  if ((spec.collective == Collective::Reduce || spec.collective == Collective::Gather) && rank != spec.root)
    return {};
  return {0, output_count(spec, rank)};
}

bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::ReduceScatter || c == Collective::Reduce;
}

std::string_view redop_column(Collective c, ReduceOp op) {
  return reduces(c) ? to_string(op) : "none";
}

bool has_in_place_form(Collective c) {
  return c != Collective::AllToAll && c != Collective::SendRecv;
}

ElemRange alltoall_block(const CollectiveSpec& spec, int block) {
  const std::uint64_t size =
      spec.world_size > 0 ? spec.count / static_cast<std::uint64_t>(spec.world_size) : 0;
  return {static_cast<std::uint64_t>(block) * size, size};
}

std::optional<std::string> alltoall_blocks_problem(const CollectiveSpec& spec) {
  if (spec.collective != Collective::AllToAll || spec.world_size < 1 ||
      spec.count % static_cast<std::uint64_t>(spec.world_size) == 0)
    return std::nullopt;
  return fmt::format(
      "an alltoall's count ({} elements) must be a multiple of its {} ranks: block b of every "
      "rank goes to rank b",
      spec.count, spec.world_size);
}

std::uint64_t in_place_offset(const CollectiveSpec& spec, int rank) {
  if (input_is_block(spec.collective) || output_is_block(spec.collective))
    return partition(spec.count, spec.world_size, rank).offset;
  return 0;
}

Bandwidths nccl_tests_bandwidths(Collective c, int world_size, double bytes, double time_s) {
  if (time_s <= 0) return {};
  const double algbw_GBps = bytes / time_s / 1e9;
  return {algbw_GBps, algbw_GBps * busbw_factor(c, world_size)};
}

double busbw_factor(Collective c, int world_size) {
  const double n = world_size;
  switch (c) {
    case Collective::AllReduce:
      return n > 1 ? 2 * (n - 1) / n : 0;
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll:  // a rank's own block does not leave it: (n-1)/n of its bytes move
    case Collective::Gather:    // the root's own block stays
    case Collective::Scatter:
      return n > 1 ? (n - 1) / n : 0;
    case Collective::Broadcast:
    case Collective::Reduce:
    case Collective::SendRecv:  // every rank sends its whole buffer once
      return 1;
  }
  return 1;
}

std::string describe(const CollectiveSpec& spec) {
  std::string text = fmt::format("{} of {} x {} ({}) over {} ranks", to_string(spec.collective), spec.count,
                                 to_string(spec.dtype), format_size(spec.bytes()), spec.world_size);
  if (reduces(spec.collective)) text += fmt::format(", op {}", to_string(spec.op));
  if (is_rooted(spec.collective)) text += fmt::format(", root {}", spec.root);
  return text;
}

}  // namespace cclab
