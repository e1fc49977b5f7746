// The schedule IR: the contract between the engine's planners and every backend (ranks as threads, SimGrid,
// MPI, NCCL). A Schedule is a value: a CollectiveSpec plus, for each rank, a program of ops from a closed
// vocabulary.
//
// Semantics (docs/algorithms.md has the long form):
// - Buffers per rank: Input and Output (sizes from the spec, see engine/ir/collective.hpp) and Scratch (the
// program
//   says how many elements it needs). A chunk is (buffer, offset, count) in elements of the spec's dtype.
// - Ops:  Send        send src to `peer`
//         Recv        receive from `peer` into dst
//         RecvReduce  receive from `peer`, dst = src (+) received   (src may equal dst)
//         Copy        dst = src                                     (local)
//         LocalReduce dst = dst (+) src                             (local)
//         SwitchReduce dst = (+) over the group's members m of m's src at this op's src chunk (members may
//                     name the same chunk: an in-network allreduce of it)
//         SwitchStore  every member m's dst at this op's dst chunk = src
//   The two switch ops are in-switch reduction and multicast (NVLink SHARP, "NVLS": multimem.ld_reduce and
//   multimem.st through the NVSwitch): one op reads or writes the memory of every member of its group, which
//   point-to-point ops cannot say (the switch combines, so a member's link carries each byte once). The same
//   ops say in-network reduction across nodes (InfiniBand SHARP, NCCL's CollNet): a group with one member per
//   node reduces through the network switches its NICs hang off (topology.hpp: sharp_port). A group
//   is named by `peer`, one of its members (the planners' member 0), together with the channel: the ranks
//   whose switch ops on channel c name g form group (g, c). Buffers are symmetric: a chunk means the same
//   offsets in every member's buffer.
// - Matching, as in NCCL's grouped point-to-point: the k-th Send from a to b on channel c matches the k-th
// Recv or
//   RecvReduce at b from a on channel c. A matched pair completes together (rendezvous): the data leaves src
//   when both sides have started. The k-th switch op of group (g, c) at each member forms one instance: it
//   starts once every member has started its k-th op and completes on all members together, so to each
//   member the instance is one op that reads (SwitchReduce) or writes (SwitchStore) the union of the
//   members' chunks in its buffers.
// - Order: on one rank, the ops of a channel start in program order; an op starts once its predecessor on the
//   channel has started and all its deps (ops of the same rank) have completed. Channels progress
//   independently, which is what lets a chunked, multi-channel ring pipeline. Data hazards are ordered by
//   deps; the verifier rejects schedules where two concurrent ops touch the same elements and one of them
//   writes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/collective.hpp"

namespace cclab {

enum class OpKind : std::uint8_t { Send, Recv, RecvReduce, Copy, LocalReduce, SwitchReduce, SwitchStore };
inline constexpr OpKind kLastOpKind = OpKind::SwitchStore;
enum class Buffer : std::uint8_t { Input, Output, Scratch };

std::string_view to_string(OpKind kind);
std::string_view to_string(Buffer buffer);
std::optional<OpKind> parse_op_kind(std::string_view text);
std::optional<Buffer> parse_buffer(std::string_view text);

inline bool is_send(OpKind k) {
  return k == OpKind::Send;
}
inline bool is_recv(OpKind k) {
  return k == OpKind::Recv || k == OpKind::RecvReduce;
}
inline bool is_comm(OpKind k) {
  return is_send(k) || is_recv(k);
}
inline bool is_switch(OpKind k) {
  return k == OpKind::SwitchReduce || k == OpKind::SwitchStore;
}
// Ops whose `peer` names a rank: the peer of a point-to-point op, the group of a switch op.
inline bool has_peer(OpKind k) {
  return is_comm(k) || is_switch(k);
}
inline bool reads_src(OpKind k) {
  return k != OpKind::Recv;
}
inline bool writes_dst(OpKind k) {
  return k != OpKind::Send;
}

struct Chunk {
  Buffer buffer = Buffer::Input;
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  std::uint64_t end() const { return offset + count; }
  bool operator==(const Chunk&) const = default;
};

using OpId = std::uint32_t;
inline constexpr OpId kNoOp = ~OpId{0};

struct Op {
  OpKind kind = OpKind::Send;
  std::uint16_t channel = 0;
  std::int32_t peer = -1;        // Send/Recv/RecvReduce; switch ops: the member naming the group
  Chunk src;                     // unused (count 0) for Recv
  Chunk dst;                     // unused (count 0) for Send
  std::uint32_t deps_begin = 0;  // deps are Program::deps[deps_begin, deps_begin + deps_count)
  std::uint32_t deps_count = 0;

  // Elements moved or combined by the op.
  std::uint64_t count() const { return kind == OpKind::Send ? src.count : dst.count; }
};

struct Program {
  std::vector<Op> ops;
  std::vector<OpId> deps;  // pool addressed by Op::deps_begin/deps_count
  std::uint64_t scratch_count = 0;

  std::span<const OpId> deps_of(const Op& op) const { return {deps.data() + op.deps_begin, op.deps_count}; }
  // Appends an op with its deps (kNoOp entries are skipped); returns its id.
  OpId add(Op op, std::span<const OpId> op_deps);
};

struct Schedule {
  CollectiveSpec spec;
  std::string algorithm;
  std::map<std::string, std::string> params;  // planner parameters, for printing and provenance only
  // IR channels per network channel (a tree runs each network channel as an up and a down IR channel): how
  // the α-β model splits links. Typed, from the planner (to_explicit) or read once when a file is loaded.
  int lanes_per_channel = 1;
  // Network channels, the planner's count (params "channels"), typed the same way; 0 when unknown: then the
  // IR channels over lanes_per_channel. A GPU's channels share its reduction and copy rates
  // (engine/model/cost.hpp).
  int network_channels = 0;
  // Kernels each rank launches one after another (params "kernels"): 1 for a collective; nccl-tests'
  // hypercube_perf posts a group of ncclSend/ncclRecv per step, log2 P kernels in a row on one stream, each
  // paying the launch cost (engine/model/protocol.hpp). Typed like the two above.
  int kernels = 1;
  std::vector<Program> ranks;  // size spec.world_size

  int world_size() const { return spec.world_size; }
  int num_channels() const;          // 1 + highest channel used
  int num_network_channels() const;  // network_channels, or the IR channels over lanes_per_channel
  std::size_t num_ops() const;
};

// Reverse deps of one program in CSR form: the ops that list op i as a dep are ids[begin[i], begin[i + 1]).
// The verifier, the progress walk and the race check all need them; building them as one flat array keeps
// that off the heap at millions of ops. Deps must be in range (check_structure checks that first).
struct Dependents {
  std::vector<std::uint32_t> begin;
  std::vector<OpId> ids;
  std::span<const OpId> of(OpId i) const { return {ids.data() + begin[i], begin[i + 1] - begin[i]}; }
};
Dependents dependents_of(const Program& program);

// The ops of a program in an order where every op comes after its deps (Kahn's algorithm; of the ops ready
// at the start, the lowest index first, so program order is kept where the deps allow). Shorter than the
// program when the deps have a cycle.
std::vector<OpId> topological_order(const Program& program, const Dependents& dependents);

// A schedule with an empty program per rank.
Schedule empty_schedule(const CollectiveSpec& spec, std::string algorithm);

// Builds one rank's program with named helpers; deps given as a list, kNoOp entries ignored.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(Program& program) : program_(program) {}
  using Deps = std::initializer_list<OpId>;

  OpId send(int peer, int channel, Chunk src, Deps deps = {});
  OpId send(int peer, int channel, Chunk src, std::span<const OpId> deps);
  OpId recv(int peer, int channel, Chunk dst, Deps deps = {});
  OpId recv(int peer, int channel, Chunk dst, std::span<const OpId> deps);
  OpId recv_reduce(int peer, int channel, Chunk src, Chunk dst, Deps deps = {});
  OpId recv_reduce(int peer, int channel, Chunk src, Chunk dst, std::span<const OpId> deps);
  // Local ops belong to a channel too: they start in that channel's order, with the transfers they feed.
  OpId copy(Chunk src, Chunk dst, Deps deps = {}, int channel = 0);
  OpId local_reduce(Chunk src, Chunk dst, Deps deps = {}, int channel = 0);
  OpId switch_reduce(int group, int channel, Chunk src, Chunk dst, Deps deps = {});
  OpId switch_store(int group, int channel, Chunk src, Chunk dst, Deps deps = {});
  OpId switch_store(int group, int channel, Chunk src, Chunk dst, std::span<const OpId> deps);
  OpId add(const Op& op, std::span<const OpId> deps) { return program_.add(op, deps); }

 private:
  Program& program_;
};

// Human-readable forms. Summary: the header plus, per channel, the ring order when the channel's sends form
// one cycle over all ranks (NCCL's "channel 0: 0 1 2 3" form), else its edges. Detailed: every op of every
// rank.
std::string format_schedule_summary(const Schedule& schedule);
std::string format_schedule_ops(const Schedule& schedule, int max_ranks = -1);
std::string format_op(const Schedule& schedule, int rank, OpId id);

// Bytes each rank sends: its Send ops, and what its switch ops send up to the switch (a SwitchReduce the
// rank's copy of every member's chunk, a SwitchStore its own chunk).
std::vector<std::uint64_t> bytes_sent_per_rank(const Schedule& schedule);
// The switch ops' part of that alone.
std::vector<std::uint64_t> switch_bytes_sent_per_rank(const Schedule& schedule);
// The switch ops of every group (g, c), keyed g << 16 | c, per member rank in program order: the k-th of each
// member make instance k (check_structure in engine/ir/progress.hpp checks and pairs them).
using SwitchGroups = std::map<std::uint64_t, std::map<int, std::vector<OpId>>>;
SwitchGroups switch_groups(const Schedule& schedule);
// What one switch instance moves through each member's port the other way (up for a SwitchReduce, down for a
// SwitchStore), from its members' chunks (src of a reduce, dst of a store): their sum, since NVLS members
// name disjoint ranges and multimem.ld_reduce reads each member's copy of every one; or one chunk when every
// member names the same range, an in-network reduction (SHARP: each member's copy goes up once, the sum comes
// back once).
class InstanceElems {
 public:
  void add(const Chunk& member_chunk) {
    sum_ += member_chunk.count;
    if (members_++ == 0) first_ = member_chunk;
    same_ = same_ && member_chunk == first_;
  }
  std::uint64_t total() const { return same_ ? first_.count : sum_; }

 private:
  std::uint64_t sum_ = 0;
  std::size_t members_ = 0;
  Chunk first_;
  bool same_ = true;
};
// The chunk of a switch op that InstanceElems counts.
inline const Chunk& instance_chunk(const Op& op) {
  return op.kind == OpKind::SwitchReduce ? op.src : op.dst;
}
// [rank][op]: for a switch op, the elements of its whole instance (InstanceElems); 0 for other ops. Empty
// rows when the schedule has no switch ops.
std::vector<std::vector<std::uint64_t>> switch_instance_elems(const Schedule& schedule);
// The same from the schedule's switch_groups, for callers that need the groups too.
std::vector<std::vector<std::uint64_t>> switch_instance_elems(const Schedule& schedule,
                                                              const SwitchGroups& groups);

}  // namespace cclab
