#include "real/mpi/transport.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/exec/reduce_kernels.hpp"

namespace cclab::real {

void check_mpi(int rc, const char* call, int peer) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw BackendError(fmt::format("{} failed{}: {}", call,
                                 peer >= 0 ? fmt::format(" (peer rank {})", peer) : "",
                                 std::string(text, static_cast<std::size_t>(length))));
}

MpiWorld::MpiWorld(int* argc, char*** argv) {
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Failures return codes, so that a dead peer becomes one clear line instead of an abort in a library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  // Node index: number the nodes by their lowest world rank (the local rank 0s, in world order).
  MPI_Comm leaders;
  check_mpi(MPI_Comm_split(MPI_COMM_WORLD, local_rank_ == 0 ? 0 : MPI_UNDEFINED, rank_, &leaders),
            "MPI_Comm_split");
  int node = 0;
  if (leaders != MPI_COMM_NULL) {
    MPI_Comm_rank(leaders, &node);
    MPI_Comm_size(leaders, &nodes_);
    MPI_Comm_free(&leaders);
  }
  MPI_Bcast(&node, 1, MPI_INT, 0, local);
  MPI_Bcast(&nodes_, 1, MPI_INT, 0, local);
  node_ = node;
  // The node's CPUs: the union of its ranks' affinity masks (a launcher that binds each rank to a core gives
  // each a mask of one; the union is what they share).
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) CPU_SET(0, &cpus);
  constexpr int kWords = CPU_SETSIZE / 64;
  std::array<unsigned long long, kWords> mask{};
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &cpus)) mask[cpu / 64] |= 1ULL << (cpu % 64);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, mask.data(), kWords, MPI_UNSIGNED_LONG_LONG, MPI_BOR, local),
            "MPI_Allreduce");
  local_cores_ = 0;
  for (const unsigned long long word : mask)
    local_cores_ += std::popcount(word);
  local_cores_ = std::max(1, local_cores_);
  MPI_Comm_free(&local);
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  host_.assign(name, static_cast<std::size_t>(length));
}

std::string MpiWorld::derived_topology() const {
  int fewest = local_size_, most = local_size_;
  MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (fewest != most) {
    throw ConfigError(
        fmt::format("hosts run between {} and {} ranks each; give --topology to say how they are "
                    "connected",
                    fewest, most));
  }
  return fmt::format("pcie_server:{},gpus={}", nodes_, local_size_);
}

MpiWorld::~MpiWorld() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

MpiTransport::MpiTransport() {
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiTransport::~MpiTransport() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Transport::Request MpiTransport::slot() {
  if (!free_.empty()) {
    const Request r = free_.back();
    free_.pop_back();
    return r;
  }
  requests_.push_back(MPI_REQUEST_NULL);
  peers_.push_back(-1);
  return static_cast<Request>(requests_.size() - 1);
}

namespace {
int message_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw ConfigError(
        fmt::format("a single message of {} bytes exceeds MPI's int count; use a smaller chunk", bytes));
  return static_cast<int>(bytes);
}
}  // namespace

Transport::Request MpiTransport::isend(int peer, int channel, const void* data, std::size_t bytes) {
  const Request r = slot();
  peers_[r] = peer;
  check_mpi(MPI_Isend(data, message_count(bytes), MPI_BYTE, peer, channel, comm_, &requests_[r]), "MPI_Isend",
            peer);
  return r;
}

Transport::Request MpiTransport::irecv(int peer, int channel, void* data, std::size_t bytes) {
  const Request r = slot();
  peers_[r] = peer;
  check_mpi(MPI_Irecv(data, message_count(bytes), MPI_BYTE, peer, channel, comm_, &requests_[r]), "MPI_Irecv",
            peer);
  return r;
}

bool MpiTransport::test(Request r) {
  int flag = 0;
  MPI_Status status;
  check_mpi(MPI_Test(&requests_[r], &flag, &status), "MPI_Test", peers_[r]);
  if (flag) free_.push_back(r);
  return flag != 0;
}

namespace {

// f16 and bf16 travel as 2-byte opaque elements, reduced by the engine's kernels (in f32, rounded back).
MPI_Datatype half_type() {
  static MPI_Datatype type = [] {
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
  }();
  return type;
}

template <DType T, ReduceOp O>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce(T, O, inout, inout, in, static_cast<std::size_t>(*len));
}

template <DType T>
MPI_Op user_op(ReduceOp op) {
  static MPI_Op ops[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  const int slot = op == ReduceOp::Min ? 1 : op == ReduceOp::Max ? 2 : 0;  // avg reduces as sum
  if (ops[slot] == MPI_OP_NULL) {
    MPI_User_function* fn = slot == 1   ? &user_reduce<T, ReduceOp::Min>
                            : slot == 2 ? &user_reduce<T, ReduceOp::Max>
                                        : &user_reduce<T, ReduceOp::Sum>;
    MPI_Op_create(fn, 1, &ops[slot]);
  }
  return ops[slot];
}

std::pair<MPI_Datatype, MPI_Op> mpi_type_and_op(DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::F32:
      return {MPI_FLOAT, op == ReduceOp::Min ? MPI_MIN : op == ReduceOp::Max ? MPI_MAX : MPI_SUM};
    case DType::F16:
      return {half_type(), user_op<DType::F16>(op)};
    case DType::BF16:
      return {half_type(), user_op<DType::BF16>(op)};
  }
  return {MPI_DATATYPE_NULL, MPI_OP_NULL};
}

int as_int(std::uint64_t count) {
  if (count > static_cast<std::uint64_t>(INT_MAX))
    throw ConfigError(fmt::format("{} elements exceed MPI's int count", count));
  return static_cast<int>(count);
}

}  // namespace

void mpi_native_collective(const CollectiveSpec& spec, MPI_Comm comm, const void* input, void* output,
                           bool in_place) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto [type, op] = mpi_type_and_op(spec.dtype, spec.op);
  const std::size_t elem = dtype_size_bytes(spec.dtype);
  const int world = spec.world_size;
  std::vector<int> counts(world), displs(world);
  for (int r = 0; r < world; ++r) {
    const ElemRange block = partition(spec.count, world, r);
    counts[r] = as_int(block.count);
    displs[r] = as_int(block.offset);
  }
  switch (spec.collective) {
    case Collective::AllReduce:
      check_mpi(MPI_Allreduce(in_place ? MPI_IN_PLACE : input, output, as_int(spec.count), type, op, comm),
                "MPI_Allreduce");
      break;
    case Collective::ReduceScatter:
      if (in_place) {
        // MPI leaves the block at the start of the buffer; cclab's in-place convention (NCCL's) keeps it at
        // the rank's offset.
        check_mpi(MPI_Reduce_scatter(MPI_IN_PLACE, output, counts.data(), type, op, comm),
                  "MPI_Reduce_scatter");
        // (an empty block has no buffer: memmove must not see a null pointer, found by UBSan)
        if (counts[rank] > 0)
          std::memmove(static_cast<std::byte*>(output) + displs[rank] * elem, output, counts[rank] * elem);
      } else {
        check_mpi(MPI_Reduce_scatter(input, output, counts.data(), type, op, comm), "MPI_Reduce_scatter");
      }
      break;
    case Collective::AllGather:
      check_mpi(MPI_Allgatherv(in_place ? MPI_IN_PLACE : input, counts[rank], type, output, counts.data(),
                               displs.data(), type, comm),
                "MPI_Allgatherv");
      break;
    case Collective::Broadcast:
      if (!in_place && rank == spec.root && spec.count > 0) std::memcpy(output, input, spec.count * elem);
      check_mpi(MPI_Bcast(output, as_int(spec.count), type, spec.root, comm), "MPI_Bcast");
      break;
    case Collective::Reduce:
      if (in_place) {
        check_mpi(MPI_Reduce(rank == spec.root ? MPI_IN_PLACE : output, output, as_int(spec.count), type, op,
                             spec.root, comm),
                  "MPI_Reduce");
      } else {
        check_mpi(MPI_Reduce(input, output, as_int(spec.count), type, op, spec.root, comm), "MPI_Reduce");
      }
      break;
    case Collective::Gather: {
      // In place, a rank's block is already in its place in its own output (NCCL's convention).
      const void* mine = in_place ? static_cast<const std::byte*>(output) + displs[rank] * elem : input;
      check_mpi(MPI_Gatherv(in_place && rank == spec.root ? MPI_IN_PLACE : mine, counts[rank], type, output,
                            counts.data(), displs.data(), type, spec.root, comm),
                "MPI_Gatherv");
      break;
    }
    case Collective::Scatter: {
      // In place, a rank's block stays at its offset of the one buffer (NCCL's convention, as
      // reduce_scatter).
      const void* send = in_place ? output : input;
      void* mine = in_place ? static_cast<std::byte*>(output) + displs[rank] * elem : output;
      check_mpi(MPI_Scatterv(send, counts.data(), displs.data(), type,
                             in_place && rank == spec.root ? MPI_IN_PLACE : mine, counts[rank], type,
                             spec.root, comm),
                "MPI_Scatterv");
      break;
    }
    case Collective::SendRecv:
      if (in_place) throw ConfigError("mpi: a sendrecv has no in-place form");
      check_mpi(
          MPI_Sendrecv(input, as_int(spec.count), type, (rank + 1) % world, 0, output, as_int(spec.count),
                       type, (rank + world - 1) % world, 0, comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
      break;
    case Collective::AllToAll:
      // cclab's alltoall has no in-place form (NCCL's has none), though MPI's has.
      if (in_place) throw ConfigError("mpi: an alltoall has no in-place form");
      check_mpi(MPI_Alltoall(input, as_int(alltoall_block(spec, 0).count), type, output,
                             as_int(alltoall_block(spec, 0).count), type, comm),
                "MPI_Alltoall");
      break;
  }
  if (spec.op == ReduceOp::Avg && reduces(spec.collective)) {
    const ElemRange result = result_range(spec, rank);
    const std::uint64_t base = in_place && output_is_block(spec.collective) ? displs[rank] : 0;
    scale(spec.dtype, static_cast<std::byte*>(output) + (base + result.offset) * elem, 1.0 / world,
          result.count);
  }
}

}  // namespace cclab::real
