// The IR's execution semantics as a deterministic walk, shared by the verifier (symbolic data), the cost
// model (times) and the step counter. It matches sends with receives, then starts ops in the order the rules
// allow and completes matched pairs; when nothing can move while ops remain, the schedule deadlocks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/ir/schedule.hpp"

namespace cclab {

// partner[r][i]: the op that op i of rank r pairs with ({peer rank, op id}); {-1, kNoOp} for local ops;
// {kSwitchInstance, instance} for a switch op, its instance's index in `instances`.
struct OpRef {
  std::int32_t rank = -1;
  OpId op = kNoOp;
};
inline constexpr std::int32_t kSwitchInstance = -2;
struct Matching {
  std::vector<std::vector<OpRef>> partner;
  // Each instance of a switch group: the k-th switch op of group (g, c) at every member, ascending rank.
  std::vector<std::vector<OpRef>> instances;
  const std::vector<OpRef>& instance_of(int rank, OpId op) const { return instances[partner[rank][op].op]; }
};

// Checks the structure every backend relies on and pairs sends with receives. Returns an error naming the
// first bad rank and op, or nullopt when the schedule is well-formed: peers in range and not self, chunks
// inside their buffers, equal src/dst counts, deps in range and acyclic, every send matched by a receive of
// the same size; switch ops: every member of a group has as many of them on its channel, the k-th of one
// kind, with their chunks inside every member's buffers.
std::optional<std::string> check_structure(const Schedule& schedule, Matching& matching);

class ProgressHooks {
 public:
  virtual ~ProgressHooks() = default;
  // An op starts (its deps are done and its channel predecessor has started).
  virtual void on_start(int /*rank*/, OpId /*op*/) {}
  // A local op runs (it starts and completes at once).
  virtual void on_local(int /*rank*/, OpId /*op*/) {}
  // A matched pair completes: the data of send_op's src lands in recv_op's dst.
  virtual void on_transfer(int /*src_rank*/, OpId /*send_op*/, int /*dst_rank*/, OpId /*recv_op*/) {}
  // A switch instance completes on all its members at once (its ops, ascending rank).
  virtual void on_switch(std::span<const OpRef> /*members*/) {}
  // Stop early (e.g. the hook found an error); the walk then returns without a deadlock report.
  virtual bool stop() const { return false; }
};

// Walks the whole schedule. Returns nullopt when every op completed (or a hook stopped the walk), else a
// deadlock report naming the first blocked rank and op.
std::optional<std::string> walk_schedule(const Schedule& schedule, const Matching& matching,
                                         ProgressHooks& hooks);

}  // namespace cclab
