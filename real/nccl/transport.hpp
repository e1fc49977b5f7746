// The NCCL transport of the real executor: device buffers, ncclSend/ncclRecv, CUDA reduction kernels on
// streams. One rank per GPU (device = local rank modulo the visible devices); the communicator is
// bootstrapped through MPI (rank 0's ncclUniqueId is broadcast), so `mpirun` and `srun` launch it alike.
//
// How work is issued, per channel (its own communicator, split from the first, and its own stream):
// everything the executor starts in one pass is issued at flush() — the sends and receives as one NCCL group
// (so a ring step's send and receive progress together instead of waiting on each other), then the pass's
// local work (the reduce of each receive-reduce into its destination, copies, reductions, scaling) as kernels
// behind it on the same stream. A request completes when the event recorded after its work fires. The same
// semantics run on the CPU in tests/stream_emulation_transport.hpp, which checks every algorithm with them.
//
// Faults: a failed NCCL call throws BackendError naming it and the peer; test() polls
// ncclCommGetAsyncError while waiting, and a transport destroyed with work outstanding (a dead peer, the
// executor's timeout) aborts its communicators instead of waiting for them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/exec/transport.hpp"
#include "engine/ir/collective.hpp"

namespace cclab::real {

class MpiWorld;

class NcclTransport final : public Transport {
 public:
  explicit NcclTransport(const MpiWorld& world);
  ~NcclTransport() override;
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  int rank() const override;
  int world_size() const override;
  std::string name() const override { return "nccl"; }
  int device() const;  // the CUDA device of this rank

  void reserve_channels(int channels) override;
  Request isend(int peer, int channel, const void* data, std::size_t bytes) override;
  Request irecv(int peer, int channel, void* data, std::size_t bytes) override;
  Request recv_reduce(int peer, int channel, DType dtype, ReduceOp op, void* dst, const void* src,
                      std::uint64_t count) override;
  Request copy(int channel, void* dst, const void* src, std::size_t bytes) override;
  Request reduce(int channel, DType dtype, ReduceOp op, void* dst, const void* a, const void* b,
                 std::uint64_t count) override;
  Request scale(int channel, DType dtype, void* data, double factor, std::uint64_t count) override;
  void flush() override;
  bool test(Request request) override;

  bool on_device() const override { return true; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* data) override;
  void upload(void* dst, const void* host_src, std::size_t bytes) override;
  void download(void* host_dst, const void* src, std::size_t bytes) override;

  // NCCL's own collective for `spec` on the device buffers (ncclAllReduce, ncclReduceScatter, ncclAllGather,
  // ncclBroadcast, ncclReduce), waited for with the same fault checks. Same buffer conventions as run_rank.
  void native_collective(const CollectiveSpec& spec, const void* input, void* output, bool in_place,
                         double timeout_s);
  // Why NCCL's collective cannot run `spec` (it needs equal blocks for reduce_scatter and allgather).
  static std::optional<std::string> native_unsupported(const CollectiveSpec& spec);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cclab::real
