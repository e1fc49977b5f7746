#include "real/nccl/transport.hpp"

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "real/mpi/transport.hpp"
#include "real/nccl/reduce_kernels.cuh"

namespace cclab::real {
namespace {

void check_cuda(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) throw BackendError(fmt::format("{} failed: {}", call, cudaGetErrorString(rc)));
}

void check_nccl(ncclResult_t rc, const char* call, ncclComm_t comm = nullptr, int peer = -1) {
  if (rc == ncclSuccess || rc == ncclInProgress) return;
  const char* detail = comm ? ncclGetLastError(comm) : "";
  throw BackendError(
      fmt::format("{} failed{}: {}{}{}", call, peer >= 0 ? fmt::format(" (peer rank {})", peer) : "",
                  ncclGetErrorString(rc), detail && *detail ? ": " : "", detail ? detail : ""));
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::F32:
      return ncclFloat32;
    case DType::F16:
      return ncclFloat16;
    case DType::BF16:
      return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ncclSum;
    case ReduceOp::Avg:
      return ncclAvg;
    case ReduceOp::Min:
      return ncclMin;
    case ReduceOp::Max:
      return ncclMax;
  }
  return ncclSum;
}

cuda::Type kernel_type(DType t) {
  return t == DType::F32 ? cuda::Type::F32 : t == DType::F16 ? cuda::Type::F16 : cuda::Type::BF16;
}

cuda::Op kernel_op(ReduceOp op) {
  return op == ReduceOp::Min ? cuda::Op::Min : op == ReduceOp::Max ? cuda::Op::Max : cuda::Op::Sum;
}

enum class Kind { Send, Recv, RecvReduce, Copy, Reduce, Scale };

struct Work {
  Kind kind;
  int peer = -1;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  const void* b = nullptr;
  DType dtype = DType::F32;
  ReduceOp op = ReduceOp::Sum;
  std::uint64_t count = 0;
  double factor = 1;
  Transport::Request request = -1;
};

struct Slot {
  cudaEvent_t event = nullptr;
  int channel = 0;
  int peer = -1;
  bool issued = false;  // flushed: the event is recorded
  bool in_use = false;
  void* staging = nullptr;  // receive-reduce: where the message lands before the reduce
  std::size_t staging_bytes = 0;
};

struct Channel {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<Work> pending;  // started since the last flush
};

}  // namespace

struct NcclTransport::Impl {
  int rank = 0, size = 1, device = 0;
  ncclComm_t root = nullptr;
  std::vector<Channel> channels;
  std::vector<Slot> slots;
  std::vector<Request> free_slots;
  std::vector<std::pair<void*, std::size_t>> free_staging;  // device buffers kept from run to run
  bool failed = false;

  Request add(int channel, Work work) {
    if (channel >= static_cast<int>(channels.size()))
      throw BackendError(fmt::format("nccl: channel {} used before reserve_channels", channel));
    Request id;
    if (!free_slots.empty()) {
      id = free_slots.back();
      free_slots.pop_back();
    } else {
      id = static_cast<Request>(slots.size());
      slots.emplace_back();
      check_cuda(cudaEventCreateWithFlags(&slots.back().event, cudaEventDisableTiming), "cudaEventCreate");
    }
    Slot& s = slots[id];
    s.channel = channel;
    s.peer = work.peer;
    s.issued = false;
    s.in_use = true;
    work.request = id;
    channels[channel].pending.push_back(work);
    return id;
  }

  void* acquire_staging(Slot& slot, std::size_t bytes) {
    for (std::size_t k = 0; k < free_staging.size(); ++k) {
      if (free_staging[k].second >= bytes) {
        slot.staging = free_staging[k].first;
        slot.staging_bytes = free_staging[k].second;
        free_staging[k] = free_staging.back();
        free_staging.pop_back();
        return slot.staging;
      }
    }
    check_cuda(cudaMalloc(&slot.staging, std::max<std::size_t>(bytes, 16)), "cudaMalloc (staging)");
    slot.staging_bytes = std::max<std::size_t>(bytes, 16);
    return slot.staging;
  }

  void release(Request id) {
    Slot& s = slots[id];
    if (s.staging) free_staging.emplace_back(s.staging, s.staging_bytes);
    s.staging = nullptr;
    s.in_use = false;
    free_slots.push_back(id);
  }

  // Waits for `stream` while watching `comm` for asynchronous errors; BackendError on failure or timeout.
  void wait(cudaStream_t stream, ncclComm_t comm, const char* what, double timeout_s) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t rc = cudaStreamQuery(stream);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) check_cuda(rc, what);
      ncclResult_t async = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", comm);
      if (async != ncclSuccess && async != ncclInProgress) {
        failed = true;
        check_nccl(async, what, comm);
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
        failed = true;
        throw BackendError(fmt::format("{}: no completion in {} s (a peer died or hangs?)", what, timeout_s));
      }
      std::this_thread::yield();
    }
  }
};

NcclTransport::NcclTransport(const MpiWorld& world) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.rank = world.rank();
  m.size = world.size();
  int devices = 0;
  // No GPU (or no driver) is the same on every rank of a host: bad set-up, not a fault mid-run.
  if (const cudaError_t rc = cudaGetDeviceCount(&devices); rc != cudaSuccess || devices == 0) {
    throw ConfigError(fmt::format("--transport nccl: no usable CUDA device on {} ({})", world.host(),
                                  rc != cudaSuccess ? cudaGetErrorString(rc) : "none visible"));
  }
  m.device = world.local_rank() % devices;
  check_cuda(cudaSetDevice(m.device), "cudaSetDevice");
  ncclUniqueId id{};
  if (m.rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_mpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast (ncclUniqueId)");
  check_nccl(ncclCommInitRank(&m.root, m.size, id, m.rank), "ncclCommInitRank");
  reserve_channels(1);
}

NcclTransport::~NcclTransport() {
  Impl& m = *impl_;
  bool outstanding = m.failed;
  for (const Slot& s : m.slots)
    outstanding |= s.in_use;
  // With work outstanding (a dead peer, a timeout) waiting would hang: abort. Otherwise a clean teardown.
  for (std::size_t c = 0; c < m.channels.size(); ++c) {
    ncclComm_t comm = m.channels[c].comm;
    if (outstanding) {
      ncclCommAbort(comm);
    } else {
      ncclCommDestroy(comm);
    }
    if (!outstanding) cudaStreamDestroy(m.channels[c].stream);
  }
  if (outstanding) return;  // device state is suspect; leave the rest to process exit
  for (Slot& s : m.slots) {
    cudaEventDestroy(s.event);
    if (s.staging) cudaFree(s.staging);
  }
  for (auto& [data, bytes] : m.free_staging)
    cudaFree(data);
}

int NcclTransport::rank() const {
  return impl_->rank;
}
int NcclTransport::world_size() const {
  return impl_->size;
}
int NcclTransport::device() const {
  return impl_->device;
}

void NcclTransport::reserve_channels(int channels) {
  Impl& m = *impl_;
  // Collective: every rank reserves the same count (the schedule's), in the same order.
  while (static_cast<int>(m.channels.size()) < channels) {
    Channel c;
    if (m.channels.empty()) {
      c.comm = m.root;
    } else {
      check_nccl(ncclCommSplit(m.root, 0, m.rank, &c.comm, nullptr), "ncclCommSplit", m.root);
    }
    check_cuda(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    m.channels.push_back(std::move(c));
  }
}

Transport::Request NcclTransport::isend(int peer, int channel, const void* data, std::size_t bytes) {
  return impl_->add(channel, {Kind::Send, peer, nullptr, data, bytes});
}

Transport::Request NcclTransport::irecv(int peer, int channel, void* data, std::size_t bytes) {
  return impl_->add(channel, {Kind::Recv, peer, data, nullptr, bytes});
}

Transport::Request NcclTransport::recv_reduce(int peer, int channel, DType dtype, ReduceOp op, void* dst,
                                              const void* src, std::uint64_t count) {
  Work w{Kind::RecvReduce, peer, dst, src, count * dtype_size_bytes(dtype)};
  w.dtype = dtype;
  w.op = op;
  w.count = count;
  return impl_->add(channel, w);
}

Transport::Request NcclTransport::copy(int channel, void* dst, const void* src, std::size_t bytes) {
  return impl_->add(channel, {Kind::Copy, -1, dst, src, bytes});
}

Transport::Request NcclTransport::reduce(int channel, DType dtype, ReduceOp op, void* dst, const void* a,
                                         const void* b, std::uint64_t count) {
  Work w{Kind::Reduce, -1, dst, a, count * dtype_size_bytes(dtype)};
  w.b = b;
  w.dtype = dtype;
  w.op = op;
  w.count = count;
  return impl_->add(channel, w);
}

Transport::Request NcclTransport::scale(int channel, DType dtype, void* data, double factor,
                                        std::uint64_t count) {
  Work w{Kind::Scale, -1, data, nullptr, count * dtype_size_bytes(dtype)};
  w.dtype = dtype;
  w.factor = factor;
  w.count = count;
  return impl_->add(channel, w);
}

void NcclTransport::flush() {
  Impl& m = *impl_;
  for (Channel& c : m.channels) {
    if (c.pending.empty()) continue;
    // The pass's transfers as one group. Empty messages are skipped on both sides alike (matched chunks
    // have equal sizes), so they need no NCCL call.
    bool any_transfer = false;
    for (const Work& w : c.pending)
      any_transfer |= (w.kind == Kind::Send || w.kind == Kind::Recv || w.kind == Kind::RecvReduce) && w.bytes;
    if (any_transfer) {
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (Work& w : c.pending) {
        if (w.bytes == 0) continue;
        if (w.kind == Kind::Send) {
          check_nccl(ncclSend(w.src, w.bytes, ncclUint8, w.peer, c.comm, c.stream), "ncclSend", c.comm,
                     w.peer);
        } else if (w.kind == Kind::Recv) {
          check_nccl(ncclRecv(w.dst, w.bytes, ncclUint8, w.peer, c.comm, c.stream), "ncclRecv", c.comm,
                     w.peer);
        } else if (w.kind == Kind::RecvReduce) {
          void* staging = m.acquire_staging(m.slots[w.request], w.bytes);
          check_nccl(ncclRecv(staging, w.bytes, ncclUint8, w.peer, c.comm, c.stream), "ncclRecv", c.comm,
                     w.peer);
        }
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd", c.comm);
    }
    // Then the local work, behind the transfers on the channel's stream.
    for (const Work& w : c.pending) {
      switch (w.kind) {
        case Kind::RecvReduce:
          if (w.count)
            cuda::launch_reduce(c.stream, kernel_type(w.dtype), kernel_op(w.op), w.dst, w.src,
                                m.slots[w.request].staging, w.count);
          break;
        case Kind::Copy:
          if (w.bytes)
            check_cuda(cudaMemcpyAsync(w.dst, w.src, w.bytes, cudaMemcpyDeviceToDevice, c.stream),
                       "cudaMemcpyAsync");
          break;
        case Kind::Reduce:
          cuda::launch_reduce(c.stream, kernel_type(w.dtype), kernel_op(w.op), w.dst, w.src, w.b, w.count);
          break;
        case Kind::Scale:
          cuda::launch_scale(c.stream, kernel_type(w.dtype), w.dst, w.factor, w.count);
          break;
        case Kind::Send:
        case Kind::Recv:
          break;
      }
    }
    check_cuda(cudaGetLastError(), "reduction kernel launch");
    for (const Work& w : c.pending) {
      check_cuda(cudaEventRecord(m.slots[w.request].event, c.stream), "cudaEventRecord");
      m.slots[w.request].issued = true;
    }
    c.pending.clear();
  }
}

bool NcclTransport::test(Request request) {
  Impl& m = *impl_;
  Slot& s = m.slots.at(static_cast<std::size_t>(request));
  if (!s.issued) return false;
  const cudaError_t rc = cudaEventQuery(s.event);
  if (rc == cudaSuccess) {
    m.release(request);
    return true;
  }
  if (rc != cudaErrorNotReady) {
    m.failed = true;
    check_cuda(rc, "cudaEventQuery");
  }
  ncclComm_t comm = m.channels[s.channel].comm;
  ncclResult_t async = ncclSuccess;
  check_nccl(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", comm);
  if (async != ncclSuccess && async != ncclInProgress) {
    m.failed = true;
    check_nccl(async, s.peer >= 0 ? "ncclSend/ncclRecv" : "NCCL (asynchronous)", comm, s.peer);
  }
  return false;
}

void* NcclTransport::allocate(std::size_t bytes) {
  void* data = nullptr;
  check_cuda(cudaMalloc(&data, std::max<std::size_t>(bytes, 16)), "cudaMalloc");
  return data;
}

void NcclTransport::deallocate(void* data) {
  cudaFree(data);
}

void NcclTransport::upload(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes) check_cuda(cudaMemcpy(dst, host_src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (upload)");
}

void NcclTransport::download(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes) check_cuda(cudaMemcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
}

std::optional<std::string> NcclTransport::native_unsupported(const CollectiveSpec& spec) {
  if ((spec.collective == Collective::ReduceScatter || spec.collective == Collective::AllGather ||
       spec.collective == Collective::AllToAll || spec.collective == Collective::Gather ||
       spec.collective == Collective::Scatter) &&
      spec.count % static_cast<std::uint64_t>(spec.world_size)) {
    return "NCCL needs equal blocks (count divisible by the ranks)";
  }
  return std::nullopt;
}

void NcclTransport::native_collective(const CollectiveSpec& spec, const void* input, void* output,
                                      bool in_place, double timeout_s) {
  if (auto why = native_unsupported(spec)) throw ConfigError(fmt::format("nccl: {}", *why));
  Impl& m = *impl_;
  const Channel& c = m.channels.front();
  const std::size_t elem = dtype_size_bytes(spec.dtype);
  const ncclDataType_t type = nccl_type(spec.dtype);
  const ncclRedOp_t op = nccl_op(spec.op);
  auto* out = static_cast<std::byte*>(output);
  const std::uint64_t block = spec.count / spec.world_size;
  const char* call = "";
  switch (spec.collective) {
    case Collective::AllReduce:
      call = "ncclAllReduce";
      check_nccl(ncclAllReduce(in_place ? out : input, out, spec.count, type, op, c.comm, c.stream), call,
                 c.comm);
      break;
    case Collective::ReduceScatter:
      call = "ncclReduceScatter";
      check_nccl(in_place
                     ? ncclReduceScatter(out, out + block * m.rank * elem, block, type, op, c.comm, c.stream)
                     : ncclReduceScatter(input, out, block, type, op, c.comm, c.stream),
                 call, c.comm);
      break;
    case Collective::AllGather:
      call = "ncclAllGather";
      check_nccl(
          ncclAllGather(in_place ? out + block * m.rank * elem : input, out, block, type, c.comm, c.stream),
          call, c.comm);
      break;
    case Collective::Broadcast:
      call = "ncclBroadcast";
      check_nccl(ncclBroadcast(in_place ? out : input, out, spec.count, type, spec.root, c.comm, c.stream),
                 call, c.comm);
      break;
    case Collective::Reduce:
      call = "ncclReduce";
      check_nccl(ncclReduce(in_place ? out : input, out, spec.count, type, op, spec.root, c.comm, c.stream),
                 call, c.comm);
      break;
    case Collective::Gather:
    case Collective::Scatter: {
      // As nccl-tests' gather_perf and scatter_perf: the root's sends or receives per rank and every other
      // rank's one, in a group; in place, a rank's block sits at its offset of the one buffer.
      const bool gather = spec.collective == Collective::Gather;
      call = gather ? "ncclSend/ncclRecv (gather)" : "ncclSend/ncclRecv (scatter)";
      const std::byte* whole = in_place ? out : static_cast<const std::byte*>(input);  // scatter's root
      const std::byte* mine = in_place ? out + block * m.rank * elem : static_cast<const std::byte*>(input);
      std::byte* into = in_place ? out + block * m.rank * elem : out;
      check_nccl(ncclGroupStart(), call, c.comm);
      if (m.rank == spec.root) {
        for (int peer = 0; peer < spec.world_size; ++peer) {
          if (gather) {
            check_nccl(ncclRecv(out + block * peer * elem, block, type, peer, c.comm, c.stream), call,
                       c.comm);
          } else {
            check_nccl(ncclSend(whole + block * peer * elem, block, type, peer, c.comm, c.stream), call,
                       c.comm);
          }
        }
      }
      if (gather) {
        check_nccl(ncclSend(mine, block, type, spec.root, c.comm, c.stream), call, c.comm);
      } else {
        check_nccl(ncclRecv(into, block, type, spec.root, c.comm, c.stream), call, c.comm);
      }
      check_nccl(ncclGroupEnd(), call, c.comm);
      break;
    }
    case Collective::SendRecv: {
      if (in_place) throw ConfigError("nccl: a sendrecv has no in-place form");
      call = "ncclSend/ncclRecv (sendrecv)";
      const int next = (m.rank + 1) % spec.world_size,
                prev = (m.rank + spec.world_size - 1) % spec.world_size;
      check_nccl(ncclGroupStart(), call, c.comm);
      check_nccl(ncclSend(input, spec.count, type, next, c.comm, c.stream), call, c.comm);
      check_nccl(ncclRecv(out, spec.count, type, prev, c.comm, c.stream), call, c.comm);
      check_nccl(ncclGroupEnd(), call, c.comm);
      break;
    }
    case Collective::AllToAll: {
      // NCCL has no alltoall call: nccl-tests' alltoall_perf posts a send and a receive per peer in one
      // group, and so does this. Its buffers must not overlap (no in-place form).
      if (in_place) throw ConfigError("nccl: an alltoall has no in-place form");
      call = "ncclSend/ncclRecv (alltoall)";
      const auto* in = static_cast<const std::byte*>(input);
      check_nccl(ncclGroupStart(), call, c.comm);
      for (int peer = 0; peer < spec.world_size; ++peer) {
        check_nccl(ncclSend(in + block * peer * elem, block, type, peer, c.comm, c.stream), call, c.comm);
        check_nccl(ncclRecv(out + block * peer * elem, block, type, peer, c.comm, c.stream), call, c.comm);
      }
      check_nccl(ncclGroupEnd(), call, c.comm);
      break;
    }
  }
  m.wait(c.stream, c.comm, call, timeout_s);
}

}  // namespace cclab::real
