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
#include "engine/exec/reduce_kernels.hpp"
#include "engine/ir/progress.hpp"

namespace cclab {

// What the ranks share: one inbox per rank, the schedule's switch instances (the switch of ranks as threads
// is their shared memory), and whether a rank has failed (the others then stop waiting).
class ThreadWorld {
 public:
  ThreadWorld(const Schedule& schedule, const Matching& matching)
      : inboxes_(static_cast<std::size_t>(schedule.spec.world_size)), schedule_(schedule) {
    instances_.resize(matching.instances.size());
    for (std::size_t i = 0; i < matching.instances.size(); ++i) {
      instances_[i].members = matching.instances[i];
      instances_[i].locate.resize(matching.instances[i].size());
      for (std::size_t k = 0; k < matching.instances[i].size(); ++k)
        slot_[{matching.instances[i][k].rank, matching.instances[i][k].op}] = {i, k};
    }
  }

  // Rank `rank` posts its op `id` of a switch instance; the last member to post runs the instance for all
  // (reading every member's data before writing any: it happens at once on every member). Returns the
  // instance.
  std::size_t post_switch(int rank, OpId id, Transport::Locate locate) {
    const auto [i, k] = slot_.at({rank, id});
    SwitchInstance& x = instances_[i];
    {
      std::lock_guard lock(switch_mutex_);
      x.locate[k] = std::move(locate);
      if (++x.posted < x.members.size()) return i;
    }
    run_switch(x);
    {
      std::lock_guard lock(switch_mutex_);
      x.done = true;
    }
    for (Inbox& box : inboxes_) {
      std::lock_guard lock(box.mutex);
      box.arrived.notify_all();
    }
    return i;
  }
  bool switch_done(std::size_t instance) {
    std::lock_guard lock(switch_mutex_);
    return instances_[instance].done;
  }

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
  struct SwitchInstance {
    std::vector<OpRef> members;
    std::vector<Transport::Locate> locate;  // per member, once it has posted
    std::size_t posted = 0;
    bool done = false;
  };

  // A SwitchReduce gives each member the reduction over all members of their data at its chunk; a SwitchStore
  // writes each member's data into every member at its chunk.
  void run_switch(SwitchInstance& x) {
    const CollectiveSpec& spec = schedule_.spec;
    const std::size_t elem = dtype_size_bytes(spec.dtype);
    auto op_of = [&](const OpRef& m) -> const Op& { return schedule_.ranks[m.rank].ops[m.op]; };
    const bool reduce_kind = op_of(x.members[0]).kind == OpKind::SwitchReduce;
    std::vector<std::vector<std::byte>> staged(x.members.size());
    for (std::size_t k = 0; k < x.members.size(); ++k) {
      const Op& op = op_of(x.members[k]);
      const std::size_t n = op.count();
      staged[k].resize(n * elem);
      if (n == 0) continue;
      if (!reduce_kind) {
        std::memcpy(staged[k].data(), x.locate[k](op.src), n * elem);
        continue;
      }
      std::memcpy(staged[k].data(), x.locate[0](op.src), n * elem);
      for (std::size_t m = 1; m < x.members.size(); ++m)
        reduce(spec.dtype, spec.op, staged[k].data(), staged[k].data(), x.locate[m](op.src), n);
    }
    for (std::size_t k = 0; k < x.members.size(); ++k) {
      const Op& op = op_of(x.members[k]);
      if (staged[k].empty()) continue;
      if (reduce_kind) {
        std::memcpy(x.locate[k](op.dst), staged[k].data(), staged[k].size());
      } else {
        for (std::size_t m = 0; m < x.members.size(); ++m)
          std::memcpy(x.locate[m](op.dst), staged[k].data(), staged[k].size());
      }
    }
  }

  std::vector<Inbox> inboxes_;
  std::atomic<bool> failed_{false};
  const Schedule& schedule_;
  std::mutex switch_mutex_;
  std::vector<SwitchInstance> instances_;
  std::map<std::pair<int, OpId>, std::pair<std::size_t, std::size_t>>
      slot_;  // (rank, op) -> (instance, member)
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
    if (p.kind == Pending::Switch) return world_.switch_done(p.bytes) && release(request);
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

  bool runs_switch_ops() const override { return true; }
  Request switch_op(OpId id, const Op& op, DType, ReduceOp, Locate locate) override {
    const std::size_t instance = world_.post_switch(rank_, id, std::move(locate));
    return add({Pending::Switch, -1, op.channel, nullptr, instance});
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
    enum Kind { Send, Recv, Switch } kind;
    int peer;
    int channel;
    void* data;
    std::size_t bytes;  // Switch: the instance
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
  Matching matching;
  if (auto e = check_structure(schedule, matching)) throw PlanError(*e);
  ThreadWorld shared(schedule, matching);
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
