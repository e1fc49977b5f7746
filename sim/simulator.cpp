#include "sim/simulator.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <xbt/log.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>

#include "common/error.hpp"
#include "engine/ir/frontier.hpp"
#include "engine/ir/progress.hpp"
#include "sim/platform.hpp"

namespace cclab::sim {
namespace sg4 = simgrid::s4u;
namespace {

RankPairs pairs_of(const Schedule& s) {
  std::set<std::pair<int, int>> pairs;
  for (int r = 0; r < s.world_size(); ++r)
    for (const Op& op : s.ranks[r].ops)
      if (op.kind == OpKind::Send) pairs.insert({r, op.peer});
  return {pairs.begin(), pairs.end()};
}

std::uint64_t connection_key(int a, int b, int channel) {
  return (static_cast<std::uint64_t>(a) << 40) | (static_cast<std::uint64_t>(b) << 16) |
         static_cast<std::uint64_t>(channel);
}

// Drives the schedule through SimGrid, creating each activity only when the IR's rules let it start:
// SimGrid 3.32 scans lists of pending communications, so a whole schedule created up front (a DAG of vetoed
// activities) costs time quadratic in its size. Here the IR's ordering is tracked by this class, SimGrid sees
// only the transfers and reductions that are in flight, and every completion (a SimGrid callback) starts
// whatever it unblocks.
class Driver {
 public:
  Driver(const Schedule& s, const std::vector<sg4::Host*>& hosts, const SimParams& params)
      : s_(s),
        hosts_(hosts),
        elem_(static_cast<double>(dtype_size_bytes(s.spec.dtype))),
        copy_factor_(params.compute.copy_Bps > 0 && params.compute.reduce_Bps > 0
                         ? params.compute.reduce_Bps / params.compute.copy_Bps
                         : 0.0),
        reduce_free_(params.compute.reduce_Bps <= 0) {
    const int world = s.world_size();
    const int channels = std::max(1, s.num_channels());
    ranks_.reserve(world);
    result_.op_times.resize(world);
    result_.rank_end_s.assign(world, 0.0);
    for (int r = 0; r < world; ++r) {
      ranks_.emplace_back(s.ranks[r], channels);
      result_.op_times[r].assign(s.ranks[r].ops.size(), OpTiming{-1, -1});
    }
    Matching matching;
    if (auto e = check_structure(s, matching)) throw PlanError(*e);
    partner_ = std::move(matching.partner);
  }

  void start_all() {
    for (int r = 0; r < s_.world_size(); ++r)
      advance(r);
  }

  // A SimGrid activity of ours finished.
  void on_completion(const sg4::Activity& activity) {
    // SimGrid is still inside this activity's completion when it calls us: release it at the next completion.
    finished_.clear();
    auto it = in_flight_.find(&activity);
    if (it == in_flight_.end()) return;
    const Task task = it->second.task;
    finished_.push_back(std::move(it->second.activity));
    in_flight_.erase(it);
    switch (task.kind) {
      case Task::Local:
        finish(task.rank, task.op);
        break;
      case Task::Reduction:
        finish(task.rank, task.op);
        break;
      case Task::Transfer: {
        const Op& recv = s_.ranks[task.peer].ops[task.peer_op];
        finish(task.rank, task.op);
        if (recv.kind == OpKind::RecvReduce && recv.dst.count > 0 && !reduce_free_) {
          launch(sg4::Exec::init()->set_flops_amount(recv.dst.count * elem_)->set_host(hosts_[task.peer]),
                 Task{Task::Reduction, task.peer, task.peer_op});
        } else {
          finish(task.peer, task.peer_op);
        }
        Connection& conn =
            connections_[connection_key(task.rank, task.peer, s_.ranks[task.rank].ops[task.op].channel)];
        conn.busy = false;
        pump(conn);
        break;
      }
    }
  }

  RunResult result() {
    for (int r = 0; r < s_.world_size(); ++r) {
      for (OpId i = 0; i < s_.ranks[r].ops.size(); ++i) {
        const OpTiming& t = result_.op_times[r][i];
        if (t.end_s < 0)
          throw BackendError(fmt::format("the simulation never completed {}", format_op(s_, r, i)));
        result_.rank_end_s[r] = std::max(result_.rank_end_s[r], t.end_s);
      }
      result_.total_s = std::max(result_.total_s, result_.rank_end_s[r]);
    }
    return std::move(result_);
  }

 private:
  struct Task {
    enum Kind { Local, Transfer, Reduction } kind;
    int rank;
    OpId op;
    int peer = -1;  // Transfer: the receiving rank and op
    OpId peer_op = kNoOp;
  };
  struct Flight {
    sg4::ActivityPtr activity;  // keeps it alive until it completes
    Task task;
  };
  struct Connection {
    std::deque<Task> ready;  // matched pairs whose both ops have started, in order
    bool busy = false;
  };

  double now() const { return sg4::Engine::get_clock(); }

  template <typename Ptr>
  void launch(Ptr activity, const Task& task) {
    in_flight_.emplace(activity.get(), Flight{activity, task});
    activity->start();
  }

  // Starts the ops of rank r that the IR allows to start now.
  void advance(int r) {
    ranks_[r].start_ready([&](OpId i) {
      result_.op_times[r][i].start_s = now();
      const Op& op = s_.ranks[r].ops[i];
      if (!is_comm(op.kind)) {
        const double flops = op.count() * elem_ * (op.kind == OpKind::Copy ? copy_factor_ : 1.0);
        if (flops <= 0 || reduce_free_) {
          finish(r, i);
        } else {
          launch(sg4::Exec::init()->set_flops_amount(flops)->set_host(hosts_[r]), Task{Task::Local, r, i});
        }
        return;
      }
      const OpRef other = partner_[r][i];
      if (!ranks_[other.rank].started(other.op)) return;  // the peer queues the pair when it starts
      const bool sending = op.kind == OpKind::Send;
      const Task transfer{Task::Transfer, sending ? r : other.rank, sending ? i : other.op,
                          sending ? other.rank : r, sending ? other.op : i};
      Connection& conn = connections_[connection_key(transfer.rank, transfer.peer, op.channel)];
      conn.ready.push_back(transfer);
      pump(conn);
    });
  }

  // Puts the connection's next message on the wire when the previous one has been delivered.
  void pump(Connection& conn) {
    if (conn.busy || conn.ready.empty()) return;
    const Task t = conn.ready.front();
    conn.ready.pop_front();
    conn.busy = true;
    const Op& send = s_.ranks[t.rank].ops[t.op];
    auto comm = sg4::Comm::sendto_init(hosts_[t.rank], hosts_[t.peer]);
    comm->set_payload_size(static_cast<std::uint64_t>(send.src.count * elem_));
    launch(comm, t);
  }

  // (Inside advance(r), the frontier's own start loop picks up what this lets start.)
  void finish(int r, OpId i) {
    result_.op_times[r][i].end_s = now();
    if (ranks_[r].complete(i)) advance(r);
  }

  const Schedule& s_;
  const std::vector<sg4::Host*>& hosts_;
  double elem_, copy_factor_;
  bool reduce_free_;
  std::vector<RankFrontier> ranks_;
  std::vector<std::vector<OpRef>> partner_;
  std::unordered_map<std::uint64_t, Connection> connections_;
  std::unordered_map<const sg4::Activity*, Flight> in_flight_;
  std::vector<sg4::ActivityPtr> finished_;
  RunResult result_;
};

// Builds the platform and runs the schedule; called inside the child process.
RunResult run_in_simgrid(const Schedule& s, const topo::Topology& t, const SimParams& params) {
  int argc = 1;
  char arg0[] = "cclab-sim";
  char* argv[] = {arg0, nullptr};
  xbt_log_control_set("root.thresh:critical");
  sg4::Engine engine(&argc, argv);
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");

  const int world = s.world_size();
  const double host_speed = params.compute.reduce_Bps > 0 ? params.compute.reduce_Bps : 1e30;
  build_platform(t, world, pairs_of(s), host_speed);
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < world; ++r)
    hosts.push_back(sg4::Host::by_name(host_name(t, r)));

  Driver driver(s, hosts, params);
  sg4::Activity::on_completion_cb([&driver](const sg4::Activity& a) { driver.on_completion(a); });
  driver.start_all();
  engine.run();
  return driver.result();
}

// ---- the child process and its pipe ----

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    p += n, size -= static_cast<std::size_t>(n);
  }
}

template <typename T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <typename T>
T take(const std::string& in, std::size_t& at) {
  if (at + sizeof(T) > in.size()) throw BackendError("simulator: truncated result from the SimGrid process");
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

std::string encode(const RunResult& r) {
  std::string out(1, 'K');
  put(out, static_cast<std::uint64_t>(r.op_times.size()));
  for (std::size_t rank = 0; rank < r.op_times.size(); ++rank) {
    put(out, static_cast<std::uint64_t>(r.op_times[rank].size()));
    for (const OpTiming& t : r.op_times[rank])
      put(out, t.start_s), put(out, t.end_s);
    put(out, r.rank_end_s[rank]);
  }
  put(out, r.total_s);
  return out;
}

RunResult decode(const std::string& in) {
  std::size_t at = 1;
  RunResult r;
  const auto world = take<std::uint64_t>(in, at);
  r.op_times.resize(world);
  r.rank_end_s.resize(world);
  for (std::size_t rank = 0; rank < world; ++rank) {
    const auto ops = take<std::uint64_t>(in, at);
    r.op_times[rank].resize(ops);
    for (auto& t : r.op_times[rank])
      t.start_s = take<double>(in, at), t.end_s = take<double>(in, at);
    r.rank_end_s[rank] = take<double>(in, at);
  }
  r.total_s = take<double>(in, at);
  return r;
}

}  // namespace

RunResult simulate(const Schedule& schedule, const topo::Topology& topology, const SimParams& params) {
  if (static_cast<int>(topology.gpus().size()) < schedule.world_size()) {
    throw ConfigError(fmt::format("topology '{}' has {} GPUs, the schedule needs {}", topology.name(),
                                  topology.gpus().size(), schedule.world_size()));
  }
  if (!params.platform_xml_path.empty()) {
    RankPairs pairs = pairs_of(schedule);
    if (params.platform_all_pairs) {
      pairs.clear();
      for (int a = 0; a < schedule.world_size(); ++a)
        for (int b = 0; b < schedule.world_size(); ++b)
          if (a != b) pairs.emplace_back(a, b);
    }
    std::ofstream xml(params.platform_xml_path);
    xml << platform_xml(topology, schedule.world_size(), pairs, params.compute.reduce_Bps);
    if (!xml) throw ConfigError(fmt::format("{}: cannot write the platform", params.platform_xml_path));
  }
  int fds[2];
  if (::pipe(fds) != 0) throw BackendError(fmt::format("simulator: pipe failed: {}", std::strerror(errno)));
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) throw BackendError(fmt::format("simulator: fork failed: {}", std::strerror(errno)));
  if (child == 0) {
    ::close(fds[0]);
    std::string message;
    try {
      message = encode(run_in_simgrid(schedule, topology, params));
    } catch (const std::exception& e) {
      message = std::string("E") + e.what();
    }
    write_all(fds[1], message.data(), message.size());
    ::close(fds[1]);
    _exit(0);
  }
  ::close(fds[1]);
  std::string reply;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
    throw BackendError(fmt::format("simulator: the SimGrid process failed (status {})", status));
  }
  if (reply[0] == 'E') throw BackendError("simulator: " + reply.substr(1));
  RunResult result = decode(reply);
  result.bytes_sent = bytes_sent_per_rank(schedule);
  return result;
}

}  // namespace cclab::sim
