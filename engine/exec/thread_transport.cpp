#include "engine/exec/thread_transport.hpp"

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
#include <utility>

#include <fmt/format.h>

#include "common/error.hpp"

namespace cclab {

// What the ranks share: one inbox per rank, and whether a rank has failed (the others then stop waiting).
class ThreadWorld {
 public:
  explicit ThreadWorld(int world_size) : inboxes_(static_cast<std::size_t>(world_size)) {}

  struct Inbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<std::pair<int, int>, std::deque<std::vector<std::byte>>> queues;  // by (sender, channel)
  };
  Inbox& inbox(int rank) { return inboxes_[static_cast<std::size_t>(rank)]; }
  int size() const { return static_cast<int>(inboxes_.size()); }

  void fail() {
    failed_ = true;
    for (Inbox& box : inboxes_) {
      std::lock_guard lock(box.mutex);
      box.arrived.notify_all();
    }
  }
  bool failed() const { return failed_; }

 private:
  std::vector<Inbox> inboxes_;
  std::atomic<bool> failed_{false};
};

namespace {

class ThreadTransport final : public Transport {
 public:
  ThreadTransport(ThreadWorld& world, int rank) : world_(world), rank_(rank) {}

  int rank() const override { return rank_; }
  int world_size() const override { return world_.size(); }
  std::string name() const override { return "threads"; }

  Request isend(int peer, int channel, const void* data, std::size_t bytes) override {
    const auto* first = static_cast<const std::byte*>(data);
    std::vector<std::byte> message(first, first + bytes);
    ThreadWorld::Inbox& box = world_.inbox(peer);
    {
      std::lock_guard lock(box.mutex);
      box.queues[{rank_, channel}].push_back(std::move(message));
    }
    box.arrived.notify_all();
    return add({Pending::Send, peer, channel, nullptr, bytes});
  }

  Request irecv(int peer, int channel, void* data, std::size_t bytes) override {
    const Request r = add({Pending::Recv, peer, channel, data, bytes});
    posted_[{peer, channel}].push_back(r);
    return r;
  }

  bool test(Request request) override {
    stop_if_failed();
    Pending& p = pending_.at(static_cast<std::size_t>(request));
    if (p.kind == Pending::Send) return release(request);
    auto& order = posted_[{p.peer, p.channel}];
    if (order.empty() || order.front() != request) return false;  // an older receive takes the next message
    ThreadWorld::Inbox& box = world_.inbox(rank_);
    std::vector<std::byte> message;
    {
      std::lock_guard lock(box.mutex);
      auto q = box.queues.find({p.peer, p.channel});
      if (q == box.queues.end() || q->second.empty()) return false;
      message = std::move(q->second.front());
      q->second.pop_front();
    }
    if (message.size() != p.bytes) {
      throw BackendError(
          fmt::format("threads transport: rank {} expected {} bytes from rank {} on channel {}, "
                      "got {}",
                      rank_, p.bytes, p.peer, p.channel, message.size()));
    }
    if (p.bytes > 0) std::memcpy(p.data, message.data(), p.bytes);
    order.pop_front();
    return release(request);
  }

  // Nothing moved: sleep until a message arrives for this rank (or a short while passes), instead of spinning
  // (ranks as threads outnumber the cores in most tests).
  void idle() override {
    stop_if_failed();
    ThreadWorld::Inbox& box = world_.inbox(rank_);
    std::unique_lock lock(box.mutex);
    box.arrived.wait_for(lock, std::chrono::milliseconds(5));
  }

 private:
  struct Pending {
    enum Kind { Send, Recv } kind;
    int peer;
    int channel;
    void* data;
    std::size_t bytes;
  };
  Request add(const Pending& p) {
    if (!free_.empty()) {
      const Request r = free_.back();
      free_.pop_back();
      pending_[static_cast<std::size_t>(r)] = p;
      return r;
    }
    pending_.push_back(p);
    return static_cast<Request>(pending_.size() - 1);
  }
  bool release(Request r) {
    free_.push_back(r);
    return true;
  }
  void stop_if_failed() const {
    if (world_.failed())
      throw BackendError(fmt::format("threads transport: rank {} stops: another rank failed", rank_));
  }

  ThreadWorld& world_;
  const int rank_;
  std::vector<Pending> pending_;
  std::vector<Request> free_;
  std::map<std::pair<int, int>, std::deque<Request>> posted_;  // receives by (peer, channel), in post order
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
                            const RunOptions& options) {
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
  ThreadWorld shared(world);
  RunResult result;
  result.rank_end_s.assign(world, 0);
  std::mutex error_mutex;
  std::exception_ptr error;
  std::vector<std::thread> threads;
  threads.reserve(world);
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        ThreadTransport transport(shared, r);
        result.rank_end_s[r] =
            run_rank(schedule, transport, buffers[r].input.data(), buffers[r].output.data(), options).total_s;
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        shared.fail();
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  if (error) std::rethrow_exception(error);
  for (double t : result.rank_end_s)
    result.total_s = std::max(result.total_s, t);
  result.bytes_sent = bytes_sent_per_rank(schedule);
  return result;
}

}  // namespace cclab
