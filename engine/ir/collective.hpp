// What a collective computes: CollectiveSpec, element types, reductions, and how buffers are partitioned.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cclab {

enum class Collective {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  AllToAll,
  Gather,
  Scatter,
  SendRecv
};
enum class DType { F32, F16, BF16 };
enum class ReduceOp { Sum, Avg, Min, Max };

std::string_view to_string(Collective c);
std::string_view to_string(DType t);
std::string_view to_string(ReduceOp op);
std::optional<Collective> parse_collective(std::string_view text);
std::optional<DType> parse_dtype(std::string_view text);
std::optional<ReduceOp> parse_reduce_op(std::string_view text);
inline constexpr std::string_view kCollectiveNames =
    "allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall, gather, scatter, sendrecv";
inline constexpr std::string_view kDTypeNames = "f32, f16, bf16";
inline constexpr std::string_view kReduceOpNames = "sum, avg, min, max";

std::size_t dtype_size_bytes(DType t);

// Buffer sizes, in elements:
//   allreduce, broadcast, reduce: input and output hold `count` elements on every rank.
//   reduce_scatter: input holds `count`; rank r's output holds its block of the balanced partition of
//   `count`. allgather: rank r's input holds its block; output holds all `count`.
//   gather: as allgather (rank r's input is its block), the root's output holds all `count`; scatter: as
//   reduce_scatter (rank r's output is its block), the root's input holds all `count`. sendrecv: input and
//   output hold `count`; rank r's output is rank r − 1's input (nccl-tests' sendrecv_perf: a ring shift).
//   alltoall: input and output hold `count` elements, P equal blocks of count / P (count must divide: an
//   exchange of unequal blocks is alltoallv, which this does not describe); block b of rank r's input goes to
//   rank b, and block b of its output comes from rank b.
// The balanced partition gives the first count % P blocks one extra element, so any count works (NCCL
// requires equal blocks; this generalises it, which hierarchical algorithms need for their sub-steps).
struct CollectiveSpec {
  Collective collective = Collective::AllReduce;
  std::uint64_t count = 0;
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::Sum;
  int root = 0;  // broadcast and reduce
  int world_size = 1;

  std::uint64_t bytes() const { return count * dtype_size_bytes(dtype); }
  bool operator==(const CollectiveSpec&) const = default;
};

struct ElemRange {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  std::uint64_t end() const { return offset + count; }
  bool operator==(const ElemRange&) const = default;
};

// Block `index` of the balanced partition of `count` elements into `parts` blocks.
ElemRange partition(std::uint64_t count, int parts, int index);
// Sub-range: block `index` of `parts` blocks of `range`.
inline ElemRange partition(ElemRange range, int parts, int index) {
  ElemRange r = partition(range.count, parts, index);
  return {range.offset + r.offset, r.count};
}

std::uint64_t input_count(const CollectiveSpec& spec, int rank);
std::uint64_t output_count(const CollectiveSpec& spec, int rank);
// Where, in its output, rank r holds a defined result (empty for non-root ranks of reduce and gather).
ElemRange result_range(const CollectiveSpec& spec, int rank);
// Whether the collective combines its ranks' data with a ReduceOp (allreduce, reduce_scatter, reduce); the
// others move data only (allgather, broadcast, alltoall, gather, scatter, sendrecv), and nccl-tests prints
// "none" as their redop.
bool reduces(Collective c);
// Whether the spec's root matters (broadcast, reduce, gather, scatter).
bool is_rooted(Collective c);
// Whether rank r's input is its block of the balanced partition (allgather, gather), or its output
// (reduce_scatter, scatter); in place, that block sits at its offset in the other buffer.
bool input_is_block(Collective c);
bool output_is_block(Collective c);
// The redop column of nccl-tests' tables: the reduction's name, or "none" where the collective has none.
std::string_view redop_column(Collective c, ReduceOp op);
// Whether the collective has an in-place form. Alltoall and sendrecv have none: NCCL runs them as grouped
// ncclSend/ncclRecv, whose buffers must not overlap (a rank would overwrite data before sending it).
bool has_in_place_form(Collective c);
// Block b of an alltoall's buffers (count / P elements from b · count / P).
ElemRange alltoall_block(const CollectiveSpec& spec, int block);
// Why the spec's alltoall has no such blocks (its count is not a multiple of its ranks), or nullopt: what the
// verifier and the planners' support check both say.
std::optional<std::string> alltoall_blocks_problem(const CollectiveSpec& spec);
// For in-place runs: where the input lives inside the output (allgather: the rank's block), or the output
// inside the input (reduce_scatter: the rank's block); the same offset 0 otherwise.
std::uint64_t in_place_offset(const CollectiveSpec& spec, int rank);

// nccl-tests bus bandwidth factor: busbw = algbw * factor.
double busbw_factor(Collective c, int world_size);
// nccl-tests' two bandwidths of a collective that moves `bytes` in `time_s` (GB/s with GB = 1e9 bytes; 0 for
// no time): algbw = bytes / time, busbw = algbw · busbw_factor. Every command that prints them uses this.
struct Bandwidths {
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};
Bandwidths nccl_tests_bandwidths(Collective c, int world_size, double bytes, double time_s);

std::string describe(const CollectiveSpec& spec);

}  // namespace cclab
