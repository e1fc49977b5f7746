// The IR's start rules for one rank, written once. Every consumer of the explicit form drives its ranks
// through this class: the progress walk (verifier, α-β model, step counter), the SimGrid driver and the one
// executor (engine/exec/executor.hpp, over MPI, NCCL or ranks as threads). What each one does when an op
// starts or a transfer completes is its own business; when an op may start is decided here:
//   - an op starts once every op it depends on has completed and the op before it on its channel has started
//     (channels progress independently; within one, ops start in program order);
//   - a local op or a transfer completes when its consumer says so (complete()), which may let ops start.
// The matching rule (the k-th send from a to b on channel c pairs with the k-th receive at b from a on c) is
// check_structure's (engine/ir/progress.hpp) for the walks that see all ranks, and the transports' per-
// (peer, channel) FIFO order for the executor, which sees one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/ir/schedule.hpp"

namespace cclab {

class RankFrontier {
 public:
  enum class State : std::uint8_t { Idle, Started, Done };

  // `channels` >= 1 + the highest channel the program uses. Deps must be in range (check_structure).
  RankFrontier(const Program& program, int channels);

  // Starts every op that may start now, and every op that those starts let start (on_start may call
  // complete() for an op that finishes as it starts, such as a host copy). on_start(op) is called once per
  // op, in start order. Re-entrant calls (start_ready from inside on_start) return at once: the outer call
  // picks their work up.
  template <typename OnStart>
  void start_ready(OnStart&& on_start);

  // Op `op` has completed (it must have started). Returns true when that made an op startable, i.e. the rank
  // has work for its next start_ready().
  bool complete(OpId op);

  State state(OpId op) const { return ops_[op].state; }
  bool started(OpId op) const { return ops_[op].state != State::Idle; }
  bool finished() const { return done_ == ops_.size(); }
  std::size_t done_count() const { return done_; }
  std::size_t op_count() const { return ops_.size(); }
  // The first op (by channel, then program order) that has not completed: where a stalled rank is stuck.
  std::optional<OpId> first_unfinished() const;

 private:
  struct OpState {
    std::uint32_t waiting = 0;  // deps not yet done
    State state = State::Idle;
    std::uint16_t channel = 0;
  };
  bool startable(int channel) const {
    return next_[channel] < channel_end_[channel] && ops_[channel_ops_[next_[channel]]].waiting == 0;
  }

  std::vector<OpState> ops_;         // per op, packed: the rules never need the 64-byte Op
  std::vector<OpId> channel_ops_;    // ops grouped by channel, program order inside a channel
  std::vector<std::uint32_t> next_;  // per channel: index into channel_ops_ of the next op to start
  std::vector<std::uint32_t> channel_end_;
  Dependents dependents_;
  std::vector<int> pending_;  // channels whose next op may have become startable
  std::size_t done_ = 0;
  bool starting_ = false;
};

template <typename OnStart>
void RankFrontier::start_ready(OnStart&& on_start) {
  if (starting_) return;
  starting_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{starting_};
  while (!pending_.empty()) {
    const int c = pending_.back();
    pending_.pop_back();
    while (startable(c)) {
      const OpId i = channel_ops_[next_[c]++];
      ops_[i].state = State::Started;
      on_start(i);
    }
  }
}

// Where a chunk's elements live once in-place aliasing is applied: the chunk with its buffer replaced by the
// storage that holds it and its offset shifted into that storage. Out of place, every buffer is its own
// storage. In place (NCCL's convention), input and output share the output storage: reduce_scatter's output
// sits inside its input, and allgather's input inside its output, at in_place_offset(). Every backend that
// touches data (the verifier's symbolic run and race check, the executors) resolves chunks through this.
Chunk resolve_aliasing(const CollectiveSpec& spec, int rank, bool in_place, const Chunk& chunk);

}  // namespace cclab
