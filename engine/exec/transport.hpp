// What the one executor (engine/exec/executor.hpp) needs from a network: nonblocking point-to-point between
// ranks, one ordered stream per (peer, channel) so that the k-th send on a channel meets the k-th receive
// (the IR's matching rule).
// Implemented over MPI (real/mpi/transport.hpp, host memory), NCCL (real/nccl/transport.hpp, GPU memory) and
// threads of one process (engine/exec/thread_transport.hpp: the engine's tests and the reference run).
//
// Host transports leave local work (copies, reductions, receive-reduce staging) to the executor on the CPU.
// Device transports (on_device() true) own it: the executor hands them copies, reductions and receive-reduces
// as asynchronous requests, ordered after the earlier work of the same channel and completed through test()
// like transfers, so that GPU buffers are never touched by the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "engine/ir/collective.hpp"
#include "engine/ir/schedule.hpp"

namespace cclab {

class Transport {
 public:
  using Request = int;  // a handle from isend/irecv/..., valid until test() reports it complete

  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string name() const = 0;

  // Messages on one (peer, channel) are delivered in the order they were posted.
  virtual Request isend(int peer, int channel, const void* data, std::size_t bytes) = 0;
  virtual Request irecv(int peer, int channel, void* data, std::size_t bytes) = 0;
  // True once the request has completed (the handle is then released). Throws BackendError on a failure,
  // naming the call and the peer.
  virtual bool test(Request request) = 0;

  // Called once per run before any op, with the schedule's channel count (the same on every rank), so that a
  // transport can set up per-channel resources collectively.
  virtual void reserve_channels(int /*channels*/) {}
  // Called after every pass in which the executor started ops: a batching transport (NCCL groups its sends
  // and receives so that a ring's send and receive of one step do not wait on each other) issues them now.
  // Ops started in one pass never depend on each other.
  virtual void flush() {}
  // Called when a pass of the executor moved nothing: give the core away until something may have changed.
  // Default: yield (the peer is another process); ranks as threads sleep until a message arrives.
  virtual void idle();

  // --- Memory. Host transports: ordinary host memory. Device transports: device memory. ---
  virtual bool on_device() const { return false; }
  virtual void* allocate(std::size_t bytes);
  virtual void deallocate(void* data);
  virtual void upload(void* dst, const void* host_src, std::size_t bytes);
  virtual void download(void* host_dst, const void* src, std::size_t bytes);

  // --- Local work of device transports (on_device() true); host transports throw std::logic_error. ---
  virtual Request copy(int channel, void* dst, const void* src, std::size_t bytes);
  // dst[i] = a[i] (op) b[i]; dst may alias a.
  virtual Request reduce(int channel, DType dtype, ReduceOp op, void* dst, const void* a, const void* b,
                         std::uint64_t count);
  // Receives `count` elements from `peer` and stores src[i] (op) message[i] into dst (dst may alias src).
  virtual Request recv_reduce(int peer, int channel, DType dtype, ReduceOp op, void* dst, const void* src,
                              std::uint64_t count);
  virtual Request scale(int channel, DType dtype, void* data, double factor, std::uint64_t count);

  // --- Switch ops (in-switch reduction and multicast, engine/ir/schedule.hpp). ---
  // Whether this transport can run them; the others move data point to point only (the executor refuses a
  // schedule with switch ops on every rank before anything moves).
  virtual bool runs_switch_ops() const { return false; }
  // This rank's op `id` (a SwitchReduce or SwitchStore) joins its instance; `locate` gives this rank's
  // address of any chunk (aliasing applied) and must stay valid until the request completes, since the
  // instance reads or writes this rank's memory at the other members' chunks too. Default: throws
  // BackendError.
  using Locate = std::function<std::byte*(const Chunk&)>;
  virtual Request switch_op(OpId id, const Op& op, DType dtype, ReduceOp reduce_op, Locate locate);
};

}  // namespace cclab
