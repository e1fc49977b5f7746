// A test double for device transports: the stream semantics of real/nccl/transport.hpp emulated on host
// memory over MPI, so that the executor's device path — and the deadlock freedom of NCCL-style issuing —
// is checked on every algorithm on machines without GPUs.
//
// What is emulated (as NcclTransport issues work): per channel, a FIFO of batches, one batch per flush();
// a batch starts only when the previous batch of its channel has completed (work on one CUDA stream); its
// transfers are posted together (one NCCL group) and its local work (copies, reductions, the reduce of a
// receive-reduce, scaling) runs once its transfers have completed, in the order it was handed over. Requests
// complete when their batch does.
#pragma once

#include <cstring>
#include <deque>
#include <vector>

#include "engine/exec/reduce_kernels.hpp"
#include "real/mpi/transport.hpp"

namespace cclab::testing {

class StreamEmulationTransport final : public Transport {
 public:
  explicit StreamEmulationTransport(real::MpiTransport& mpi) : mpi_(mpi) {}

  int rank() const override { return mpi_.rank(); }
  int world_size() const override { return mpi_.world_size(); }
  std::string name() const override { return "stream-emulation"; }
  bool on_device() const override { return true; }

  void reserve_channels(int channels) override {
    if (static_cast<int>(queues_.size()) < channels) {
      queues_.resize(channels);
      pending_.resize(channels);
    }
  }

  Request isend(int peer, int channel, const void* data, std::size_t bytes) override {
    return add(channel, {Kind::Send, peer, const_cast<void*>(data), nullptr, bytes});
  }
  Request irecv(int peer, int channel, void* data, std::size_t bytes) override {
    return add(channel, {Kind::Recv, peer, data, nullptr, bytes});
  }
  Request recv_reduce(int peer, int channel, DType dtype, ReduceOp op, void* dst, const void* src,
                      std::uint64_t count) override {
    Item item{Kind::RecvReduce, peer, dst, src, count * dtype_size_bytes(dtype)};
    item.dtype = dtype;
    item.op = op;
    item.count = count;
    return add(channel, item);
  }
  Request copy(int channel, void* dst, const void* src, std::size_t bytes) override {
    return add(channel, {Kind::Copy, -1, dst, src, bytes});
  }
  Request reduce(int channel, DType dtype, ReduceOp op, void* dst, const void* a, const void* b,
                 std::uint64_t count) override {
    Item item{Kind::Reduce, -1, dst, a, count * dtype_size_bytes(dtype)};
    item.b = b;
    item.dtype = dtype;
    item.op = op;
    item.count = count;
    return add(channel, item);
  }
  Request scale(int channel, DType dtype, void* data, double factor, std::uint64_t count) override {
    Item item{Kind::Scale, -1, data, nullptr, count * dtype_size_bytes(dtype)};
    item.dtype = dtype;
    item.factor = factor;
    item.count = count;
    return add(channel, item);
  }

  void flush() override {
    for (std::size_t c = 0; c < pending_.size(); ++c) {
      if (pending_[c].empty()) continue;
      queues_[c].push_back(Batch{std::move(pending_[c]), false});
      pending_[c].clear();
    }
  }

  bool test(Request request) override {
    progress();
    if (!items_[request].done) return false;
    free_.push_back(request);
    return true;
  }

 private:
  enum class Kind { Send, Recv, RecvReduce, Copy, Reduce, Scale };
  struct Item {
    Kind kind;
    int peer;
    void* dst;
    const void* src;
    std::size_t bytes;
    const void* b = nullptr;
    DType dtype = DType::F32;
    ReduceOp op = ReduceOp::Sum;
    std::uint64_t count = 0;
    double factor = 1;
    int channel = 0;
    Request mpi = -1;
    std::vector<std::byte> staging = {};
    bool done = false;
  };
  struct Batch {
    std::vector<Request> items;
    bool started = false;
  };

  Request add(int channel, Item item) {
    reserve_channels(channel + 1);
    item.channel = channel;
    Request id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
      items_[id] = std::move(item);
    } else {
      id = static_cast<Request>(items_.size());
      items_.push_back(std::move(item));
    }
    pending_[channel].push_back(id);
    return id;
  }

  void progress() {
    for (auto& queue : queues_) {
      while (!queue.empty() && advance(queue.front()))
        queue.pop_front();
    }
  }

  // Starts the batch's transfers (once); when all have arrived, runs its local work. True when done.
  bool advance(Batch& batch) {
    if (!batch.started) {
      batch.started = true;
      for (Request id : batch.items) {
        Item& it = items_[id];
        if (it.kind == Kind::Send) it.mpi = mpi_.isend(it.peer, it.channel, it.dst, it.bytes);
        if (it.kind == Kind::Recv) it.mpi = mpi_.irecv(it.peer, it.channel, it.dst, it.bytes);
        if (it.kind == Kind::RecvReduce) {
          it.staging.resize(it.bytes);
          it.mpi = mpi_.irecv(it.peer, it.channel, it.staging.data(), it.bytes);
        }
      }
    }
    for (Request id : batch.items) {
      Item& it = items_[id];
      if (it.mpi >= 0) {
        if (!mpi_.test(it.mpi)) return false;
        it.mpi = -1;
      }
    }
    for (Request id : batch.items) {
      Item& it = items_[id];
      switch (it.kind) {
        case Kind::RecvReduce:
          cclab::reduce(it.dtype, it.op, it.dst, it.src, it.staging.data(), it.count);
          it.staging = {};
          break;
        case Kind::Copy:
          if (it.bytes) std::memmove(it.dst, it.src, it.bytes);
          break;
        case Kind::Reduce:
          cclab::reduce(it.dtype, it.op, it.dst, it.src, it.b, it.count);
          break;
        case Kind::Scale:
          cclab::scale(it.dtype, it.dst, it.factor, it.count);
          break;
        case Kind::Send:
        case Kind::Recv:
          break;
      }
      it.done = true;
    }
    return true;
  }

  real::MpiTransport& mpi_;
  std::vector<Item> items_;
  std::vector<Request> free_;
  std::vector<std::vector<Request>> pending_;
  std::vector<std::deque<Batch>> queues_;
};

}  // namespace cclab::testing
