#include "engine/exec/executor.hpp"

#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/exec/reduce_kernels.hpp"
#include "engine/ir/frontier.hpp"

namespace cclab {
namespace {

using Clock = std::chrono::steady_clock;

// Receive-reduce staging buffers, reused: allocating a fresh megabyte per chunk costs an mmap, page faults
// on first touch and an munmap — more than moving the chunk through shared memory.
struct Staging {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t capacity = 0;
  std::byte* data = nullptr;
};

}  // namespace

class Workspace::Pool {
 public:
  Staging acquire(std::size_t n) {
    for (std::size_t k = 0; k < free_.size(); ++k) {
      if (free_[k].capacity >= n) {
        Staging s = std::move(free_[k]);
        free_[k] = std::move(free_.back());
        free_.pop_back();
        return s;
      }
    }
    Staging s{std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(n, 1)),
              std::max<std::size_t>(n, 1), nullptr};
    s.data = s.bytes.get();
    return s;
  }
  void release(Staging s) { free_.push_back(std::move(s)); }

 private:
  std::vector<Staging> free_;
};

Workspace::Workspace() : pool_(std::make_unique<Pool>()) {}
Workspace::~Workspace() = default;

namespace {

// Scratch memory where the transport keeps its buffers (host or device), freed on every exit path.
struct TransportBuffer {
  TransportBuffer(Transport& t, std::size_t bytes)
      : transport(t), data(bytes ? static_cast<std::byte*>(t.allocate(bytes)) : nullptr) {}
  ~TransportBuffer() {
    if (data) transport.deallocate(data);
  }
  TransportBuffer(const TransportBuffer&) = delete;
  TransportBuffer& operator=(const TransportBuffer&) = delete;
  Transport& transport;
  std::byte* data;
};

class RankRun {
 public:
  RankRun(const Schedule& s, Transport& t, const void* input, void* output, const RunOptions& o,
          Workspace::Pool& pool)
      : pool_(pool),
        s_(s),
        t_(t),
        rank_(t.rank()),
        p_(s.ranks.at(static_cast<std::size_t>(t.rank()))),
        options_(o),
        elem_(dtype_size_bytes(s.spec.dtype)),
        device_(t.on_device()),
        input_(static_cast<const std::byte*>(input)),
        output_(static_cast<std::byte*>(output)),
        scratch_(t, p_.scratch_count * elem_),
        frontier_(p_, std::max(1, s.num_channels())),
        request_(p_.ops.size(), -1),
        staging_(p_.ops.size()) {}

  RankTiming run() {
    // Every rank refuses before it moves anything, so no peer is left waiting.
    for (const Op& op : p_.ops) {
      if (is_switch(op.kind) && !t_.runs_switch_ops()) {
        throw BackendError(fmt::format(
            "rank {}: schedule '{}' reduces inside the switch ({}), which the {} transport cannot "
            "do: it moves data point to point (NCCL's NVLS through CUDA multicast objects is not "
            "wired in); the α-β model, the simulator and ranks as threads run it",
            rank_, s_.algorithm, to_string(op.kind), t_.name()));
      }
    }
    t_.reserve_channels(s_.num_channels());
    const auto start = Clock::now();
    auto last_progress = start;
    while (!frontier_.finished()) {
      bool progressed = false;
      // Start what may start (the IR's rules: engine/ir/frontier.hpp).
      frontier_.start_ready([&](OpId i) {
        start_op(i);
        progressed = true;
      });
      if (progressed) t_.flush();
      // Complete what has arrived, sweeping again after any completion: requests complete together in batches
      // on device transports (an NCCL group and its kernels), and a sweep that tested a batch's first request
      // just before the batch finished would see only part of it. Starting the next ops on that partial view
      // splits what belongs in one group over two stream-ordered groups, which can deadlock against the peer.
      for (bool found = true; found;) {
        found = false;
        for (auto it = in_flight_.begin(); it != in_flight_.end();) {
          const OpId i = *it;
          if (t_.test(request_[i])) {
            finish_transfer(i);
            progressed = found = true;
            it = in_flight_.erase(it);
          } else {
            ++it;
          }
        }
      }
      const auto now = Clock::now();
      if (progressed) {
        last_progress = now;
      } else {
        // Nothing to do until a message moves: give the core to a peer (ranks often outnumber cores).
        t_.idle();
      }
      if (!progressed && std::chrono::duration<double>(now - last_progress).count() > options_.timeout_s) {
        throw BackendError(stall_message());
      }
    }
    finish_avg();
    return {std::chrono::duration<double>(Clock::now() - start).count()};
  }

 private:
  std::byte* address(const Chunk& chunk) {
    const Chunk c = resolve_aliasing(s_.spec, rank_, options_.in_place, chunk);
    switch (c.buffer) {
      case Buffer::Scratch:
        return scratch_.data + c.offset * elem_;
      case Buffer::Output:
        return output_ + c.offset * elem_;
      case Buffer::Input:
        return const_cast<std::byte*>(input_) + c.offset * elem_;  // only ever read
    }
    return nullptr;
  }

  void start_op(OpId i) {
    const Op& op = p_.ops[i];
    switch (op.kind) {
      case OpKind::Send:
        request_[i] = t_.isend(op.peer, op.channel, address(op.src), op.src.count * elem_);
        break;
      case OpKind::Recv:
        request_[i] = t_.irecv(op.peer, op.channel, address(op.dst), op.dst.count * elem_);
        break;
      case OpKind::RecvReduce:
        if (device_) {
          request_[i] = t_.recv_reduce(op.peer, op.channel, s_.spec.dtype, s_.spec.op, address(op.dst),
                                       address(op.src), op.dst.count);
          break;
        }
        staging_[i] = pool_.acquire(op.dst.count * elem_);
        request_[i] = t_.irecv(op.peer, op.channel, staging_[i].data, op.dst.count * elem_);
        break;
      case OpKind::Copy:
        if (device_) {
          request_[i] = t_.copy(op.channel, address(op.dst), address(op.src), op.dst.count * elem_);
          break;
        }
        if (op.dst.count > 0) std::memmove(address(op.dst), address(op.src), op.dst.count * elem_);
        frontier_.complete(i);
        return;
      case OpKind::LocalReduce:
        if (device_) {
          request_[i] = t_.reduce(op.channel, s_.spec.dtype, s_.spec.op, address(op.dst), address(op.dst),
                                  address(op.src), op.dst.count);
          break;
        }
        reduce(s_.spec.dtype, s_.spec.op, address(op.dst), address(op.dst), address(op.src), op.dst.count);
        frontier_.complete(i);
        return;
      case OpKind::SwitchReduce:
      case OpKind::SwitchStore:
        request_[i] = t_.switch_op(i, op, s_.spec.dtype, s_.spec.op,
                                   [this](const Chunk& chunk) { return address(chunk); });
        break;
    }
    in_flight_.push_back(i);
  }

  void finish_transfer(OpId i) {
    const Op& op = p_.ops[i];
    if (op.kind == OpKind::RecvReduce && !device_) {
      reduce(s_.spec.dtype, s_.spec.op, address(op.dst), address(op.src), staging_[i].data, op.dst.count);
      pool_.release(std::move(staging_[i]));
    }
    frontier_.complete(i);
  }

  void finish_avg() {
    if (s_.spec.op != ReduceOp::Avg || !reduces(s_.spec.collective)) {
      return;
    }
    const ElemRange result = result_range(s_.spec, rank_);
    std::byte* data = address(Chunk{Buffer::Output, result.offset, result.count});
    if (!device_) {
      scale(s_.spec.dtype, data, 1.0 / s_.spec.world_size, result.count);
      return;
    }
    const Transport::Request request =
        t_.scale(0, s_.spec.dtype, data, 1.0 / s_.spec.world_size, result.count);
    t_.flush();
    const auto start = Clock::now();
    while (!t_.test(request)) {
      std::this_thread::yield();
      if (std::chrono::duration<double>(Clock::now() - start).count() > options_.timeout_s)
        throw BackendError(fmt::format("{} executor: rank {}: the final avg scaling did not finish in {} s",
                                       t_.name(), rank_, options_.timeout_s));
    }
  }

  std::string stall_message() const {
    std::string waiting;
    for (OpId i : in_flight_) {
      const Op& op = p_.ops[i];
      if (op.kind == OpKind::Copy || op.kind == OpKind::LocalReduce) {
        waiting = fmt::format("op {} ({} on channel {}, device work)", i, to_string(op.kind), op.channel);
      } else {
        waiting = fmt::format("op {} ({} {} rank {} on channel {})", i, to_string(op.kind),
                              op.kind == OpKind::Send ? "to" : "from", op.peer, op.channel);
      }
      break;
    }
    if (waiting.empty()) waiting = "ops whose deps never completed";
    return fmt::format("{} executor: rank {} made no progress for {} s, waiting on {}; {} of {} ops done",
                       t_.name(), rank_, options_.timeout_s, waiting, frontier_.done_count(), p_.ops.size());
  }

  Workspace::Pool& pool_;
  const Schedule& s_;
  Transport& t_;
  const int rank_;
  const Program& p_;
  const RunOptions options_;
  const std::size_t elem_;
  const bool device_;  // local work goes to the transport (GPU streams), not the host
  const std::byte* input_;
  std::byte* output_;
  TransportBuffer scratch_;
  RankFrontier frontier_;
  std::vector<Transport::Request> request_;
  std::vector<Staging> staging_;
  std::deque<OpId> in_flight_;
};

}  // namespace

RankTiming run_rank(const Schedule& schedule, Transport& transport, const void* input, void* output,
                    const RunOptions& options, Workspace* workspace) {
  if (schedule.world_size() != transport.world_size()) {
    throw ConfigError(fmt::format("the schedule is for {} ranks, the {} world has {}", schedule.world_size(),
                                  transport.name(), transport.world_size()));
  }
  if (workspace) return RankRun(schedule, transport, input, output, options, workspace->pool()).run();
  Workspace local;
  return RankRun(schedule, transport, input, output, options, local.pool()).run();
}

std::size_t scratch_bytes(const Schedule& schedule, int rank) {
  return schedule.ranks.at(static_cast<std::size_t>(rank)).scratch_count *
         dtype_size_bytes(schedule.spec.dtype);
}

}  // namespace cclab
