#include "engine/exec/executor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/ir/frontier.hpp"
#include "engine/exec/reduce_kernels.hpp"

namespace cclab {
namespace {

using Clock = std::chrono::steady_clock;

// One rank's incoming messages, by (source, channel), in send order. Sends are buffered (eager): the verifier
// has already ruled out races on send buffers, so copying at send time gives the same result as rendezvous.
struct Mailbox {
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> queues;
};

class ReferenceRun {
 public:
  ReferenceRun(const Schedule& s, std::vector<RankBuffers>& buffers, const ExecOptions& options)
      : s_(s),
        buffers_(buffers),
        options_(options),
        mailboxes_(s.spec.world_size),
        elem_(dtype_size_bytes(s.spec.dtype)),
        channels_(std::max(1, s.num_channels())) {
    result_.op_times.resize(s.spec.world_size);
    result_.rank_end_s.assign(s.spec.world_size, 0);
  }

  RunResult run() {
    const int world = s_.spec.world_size;
    start_ = Clock::now();
    std::vector<std::thread> threads;
    threads.reserve(world);
    for (int r = 0; r < world; ++r)
      threads.emplace_back([this, r] { guarded(r); });
    for (auto& t : threads)
      t.join();
    if (error_) std::rethrow_exception(error_);
    for (double t : result_.rank_end_s)
      result_.total_s = std::max(result_.total_s, t);
    result_.bytes_sent = bytes_sent_per_rank(s_);
    return std::move(result_);
  }

 private:
  void guarded(int rank) {
    try {
      run_rank(rank);
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
      failed_ = true;
      for (auto& box : mailboxes_) {
        std::lock_guard l(box.mutex);
        box.arrived.notify_all();
      }
    }
  }

  double now() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  std::byte* address(int rank, const Chunk& chunk) {
    const Chunk c = resolve_aliasing(s_.spec, rank, options_.in_place, chunk);
    switch (c.buffer) {
      case Buffer::Scratch:
        return scratch_[rank].data() + c.offset * elem_;
      case Buffer::Output:
        return buffers_[rank].output.data() + c.offset * elem_;
      case Buffer::Input:
        return buffers_[rank].input.data() + c.offset * elem_;
    }
    return nullptr;
  }

  void run_rank(int rank) {
    const Program& p = s_.ranks[rank];
    scratch_[rank].assign(p.scratch_count * elem_, std::byte{0});
    RankFrontier frontier(p, channels_);
    std::vector<OpId> pending;  // started receives, in start order
    std::vector<OpTiming>& times = result_.op_times[rank];
    times.assign(p.ops.size(), OpTiming{});
    Mailbox& inbox = mailboxes_[rank];
    auto finish = [&](OpId i) {
      times[i].end_s = now();
      frontier.complete(i);
    };

    auto last_progress = Clock::now();
    while (!frontier.finished()) {
      if (failed_) return;
      bool progressed = false;
      // Start what may start (the IR's rules: engine/ir/frontier.hpp).
      frontier.start_ready([&](OpId i) {
          const Op& op = p.ops[i];
          times[i].start_s = now();
          progressed = true;
          switch (op.kind) {
            case OpKind::Send: {
              std::vector<std::byte> message(address(rank, op.src),
                                             address(rank, op.src) + op.src.count * elem_);
              Mailbox& box = mailboxes_[op.peer];
              {
                std::lock_guard lock(box.mutex);
                box.queues[{rank, op.channel}].push_back(std::move(message));
              }
              box.arrived.notify_one();
              finish(i);
              break;
            }
            case OpKind::Recv:
            case OpKind::RecvReduce:
              pending.push_back(i);
              break;
            case OpKind::Copy:
              // (an empty buffer has no address: memmove must not see a null pointer, even for 0 bytes)
              if (op.count() > 0)
                std::memmove(address(rank, op.dst), address(rank, op.src), op.count() * elem_);
              finish(i);
              break;
            case OpKind::LocalReduce:
              reduce(s_.spec.dtype, s_.spec.op, address(rank, op.dst), address(rank, op.dst),
                     address(rank, op.src), op.count());
              finish(i);
              break;
          }
      });
      // Complete pending receives whose message has arrived; per (peer, channel) only the oldest may match.
      {
        std::unique_lock lock(inbox.mutex);
        // A receive that found no message blocks later receives on its (peer, channel) for this pass, even if
        // a message arrives meanwhile: that message belongs to the older receive.
        std::vector<std::pair<int, int>> blocked;
        for (auto it = pending.begin(); it != pending.end();) {
          const Op& op = p.ops[*it];
          const std::pair<int, int> key{op.peer, op.channel};
          auto q = inbox.queues.find(key);
          if (q == inbox.queues.end() || q->second.empty() ||
              std::find(blocked.begin(), blocked.end(), key) != blocked.end()) {
            blocked.push_back(key);
            ++it;
            continue;
          }
          std::vector<std::byte> message = std::move(q->second.front());
          q->second.pop_front();
          lock.unlock();
          if (op.kind == OpKind::Recv) {
            if (!message.empty()) std::memcpy(address(rank, op.dst), message.data(), message.size());
          } else {
            reduce(s_.spec.dtype, s_.spec.op, address(rank, op.dst), address(rank, op.src), message.data(),
                   op.count());
          }
          finish(*it);
          progressed = true;
          it = pending.erase(it);
          lock.lock();
        }
        if (!progressed && !frontier.finished()) {
          inbox.arrived.wait_for(lock, std::chrono::milliseconds(50));
          if (std::chrono::duration<double>(Clock::now() - last_progress).count() >
              options_.stall_timeout_s) {
            throw BackendError(
                fmt::format("reference executor: rank {} made no progress for {} s ({} of {} ops done)", rank,
                            options_.stall_timeout_s, frontier.done_count(), p.ops.size()));
          }
        }
      }
      if (progressed) last_progress = Clock::now();
    }
    if (s_.spec.op == ReduceOp::Avg && s_.spec.collective != Collective::AllGather &&
        s_.spec.collective != Collective::Broadcast) {
      const ElemRange result = result_range(s_.spec, rank);
      scale(s_.spec.dtype, address(rank, Chunk{Buffer::Output, result.offset, result.count}),
            1.0 / s_.spec.world_size, result.count);
    }
    result_.rank_end_s[rank] = now();
  }

  const Schedule& s_;
  std::vector<RankBuffers>& buffers_;
  ExecOptions options_;
  std::vector<Mailbox> mailboxes_;
  std::vector<std::vector<std::byte>> scratch_ = std::vector<std::vector<std::byte>>(s_.spec.world_size);
  std::size_t elem_;
  int channels_;
  RunResult result_;
  Clock::time_point start_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

}  // namespace

RankBuffers make_rank_buffers(const CollectiveSpec& spec, int rank, bool in_place) {
  const std::size_t elem = dtype_size_bytes(spec.dtype);
  RankBuffers b;
  const std::uint64_t in = input_count(spec, rank), out = output_count(spec, rank);
  if (in_place) {
    b.output.assign(std::max(in, out) * elem, std::byte{0});
  } else {
    b.input.assign(in * elem, std::byte{0});
    b.output.assign(out * elem, std::byte{0});
  }
  return b;
}

RunResult execute_reference(const Schedule& schedule, std::vector<RankBuffers>& buffers,
                            const ExecOptions& options) {
  const int world = schedule.spec.world_size;
  if (static_cast<int>(buffers.size()) != world) {
    throw ConfigError(fmt::format("execute: {} rank buffers for a world of {}", buffers.size(), world));
  }
  const std::size_t elem = dtype_size_bytes(schedule.spec.dtype);
  for (int r = 0; r < world; ++r) {
    const std::uint64_t in = input_count(schedule.spec, r), out = output_count(schedule.spec, r);
    const bool ok = options.in_place
                        ? buffers[r].output.size() >= std::max(in, out) * elem
                        : buffers[r].input.size() >= in * elem && buffers[r].output.size() >= out * elem;
    if (!ok) throw ConfigError(fmt::format("execute: rank {} buffers are smaller than the spec needs", r));
  }
  return ReferenceRun(schedule, buffers, options).run();
}

}  // namespace cclab
