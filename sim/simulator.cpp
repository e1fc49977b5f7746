#include "sim/simulator.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <xbt/log.h>

#include "common/error.hpp"
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
  return (static_cast<std::uint64_t>(a) << 40) | (static_cast<std::uint64_t>(b) << 16) | static_cast<std::uint64_t>(channel);
}

// Builds the activity graph and runs it; called inside the child process.
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
  const double reduce_Bps = params.compute.reduce_Bps > 0 ? params.compute.reduce_Bps : 1e30;
  const double copy_factor = params.compute.copy_Bps > 0 ? reduce_Bps / params.compute.copy_Bps : 0.0;
  const RankPairs pairs = pairs_of(s);
  build_platform(t, world, pairs, reduce_Bps);
  std::vector<sg4::Host*> hosts;
  for (int r = 0; r < world; ++r) hosts.push_back(sg4::Host::by_name(host_name(t, r)));
  const double elem = static_cast<double>(dtype_size_bytes(s.spec.dtype));

  // Per op: its start marker and the activity whose completion completes the op.
  std::vector<std::vector<sg4::ActivityPtr>> started(world), done(world);
  std::unordered_map<std::uint64_t, sg4::ActivityPtr> last_on_connection;
  std::vector<sg4::ActivityPtr> all;
  auto depend = [](const sg4::ActivityPtr& before, const sg4::ActivityPtr& after) {
    const auto& existing = before->get_successors();
    if (std::find(existing.begin(), existing.end(), after) != existing.end()) return;
    // add_successor is public on the typed activities only.
    if (auto* exec = dynamic_cast<sg4::Exec*>(before.get())) exec->add_successor(after);
    else static_cast<sg4::Comm*>(before.get())->add_successor(after);
  };
  // Markers first, in program order per rank, so every op's predecessors exist when it is wired.
  for (int r = 0; r < world; ++r) {
    const Program& p = s.ranks[r];
    started[r].resize(p.ops.size());
    done[r].resize(p.ops.size());
    for (OpId i = 0; i < p.ops.size(); ++i) {
      auto marker = sg4::Exec::init()->set_flops_amount(0)->set_host(hosts[r]);
      started[r][i] = marker;
      all.push_back(marker);
      const Op& op = p.ops[i];
      if (!is_comm(op.kind)) {
        const double flops = op.count() * elem * (op.kind == OpKind::Copy ? copy_factor : 1.0);
        auto exec = sg4::Exec::init()->set_flops_amount(flops)->set_host(hosts[r]);
        depend(marker, exec);
        done[r][i] = exec;
        all.push_back(exec);
      }
    }
  }
  // Pair sends and receives per connection in program order (the verifier has already checked the matching).
  std::vector<std::unordered_map<std::uint64_t, std::vector<OpId>>> recvs(world);
  for (int b = 0; b < world; ++b)
    for (OpId j = 0; j < s.ranks[b].ops.size(); ++j) {
      const Op& op = s.ranks[b].ops[j];
      if (is_recv(op.kind)) recvs[b][connection_key(op.peer, 0, op.channel)].push_back(j);
    }
  for (int a = 0; a < world; ++a) {
    const Program& p = s.ranks[a];
    std::unordered_map<std::uint64_t, std::size_t> sent;
    for (OpId i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      if (op.kind != OpKind::Send) continue;
      const int b = op.peer;
      const OpId j = recvs[b].at(connection_key(a, 0, op.channel)).at(sent[connection_key(b, 0, op.channel)]++);
      const Op& rop = s.ranks[b].ops[j];
      auto comm = sg4::Comm::sendto_init(hosts[a], hosts[b]);
      comm->set_payload_size(static_cast<std::uint64_t>(op.src.count * elem));
      depend(started[a][i], comm);
      depend(started[b][j], comm);
      auto& previous = last_on_connection[connection_key(a, b, op.channel)];
      if (previous) depend(previous, comm);
      previous = comm;
      all.push_back(comm);
      done[a][i] = comm;
      if (rop.kind == OpKind::RecvReduce && rop.dst.count > 0) {
        auto reduce = sg4::Exec::init()->set_flops_amount(rop.dst.count * elem)->set_host(hosts[b]);
        depend(comm, reduce);
        all.push_back(reduce);
        done[b][j] = reduce;
      } else {
        done[b][j] = comm;
      }
    }
  }
  // Ordering edges: deps complete before an op starts; a channel's ops start in program order.
  for (int r = 0; r < world; ++r) {
    const Program& p = s.ranks[r];
    std::unordered_map<int, OpId> previous_on_channel;
    for (OpId i = 0; i < p.ops.size(); ++i) {
      for (OpId d : p.deps_of(p.ops[i])) depend(done[r][d], started[r][i]);
      auto prev = previous_on_channel.find(p.ops[i].channel);
      if (prev != previous_on_channel.end()) depend(started[r][prev->second], started[r][i]);
      previous_on_channel[p.ops[i].channel] = i;
    }
  }
  for (auto& activity : all) activity->vetoable_start();
  engine.run();

  RunResult result;
  result.op_times.resize(world);
  result.rank_end_s.assign(world, 0.0);
  for (int r = 0; r < world; ++r) {
    const Program& p = s.ranks[r];
    result.op_times[r].resize(p.ops.size());
    for (OpId i = 0; i < p.ops.size(); ++i) {
      OpTiming& timing = result.op_times[r][i];
      timing.start_s = started[r][i]->get_finish_time();
      timing.end_s = done[r][i]->get_finish_time();
      if (timing.end_s < 0) throw BackendError(fmt::format("SimGrid never completed {}", format_op(s, r, i)));
      result.rank_end_s[r] = std::max(result.rank_end_s[r], timing.end_s);
    }
    result.total_s = std::max(result.total_s, result.rank_end_s[r]);
  }
  return result;
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
    for (const OpTiming& t : r.op_times[rank]) put(out, t.start_s), put(out, t.end_s);
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
    for (auto& t : r.op_times[rank]) t.start_s = take<double>(in, at), t.end_s = take<double>(in, at);
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
    std::ofstream xml(params.platform_xml_path);
    xml << platform_xml(topology, schedule.world_size(), pairs_of(schedule), params.compute.reduce_Bps);
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
