// The compact form of a schedule: what planners produce and what consumers work on (docs/design.md, "Two
// forms of one schedule"). The explicit per-rank programs of engine/ir/schedule.hpp stay the semantics;
// `expand` is the only bridge from this form to them, one rank at a time.
//
//   CompactSchedule = phases, run one after the other on every rank
//   Phase           = lanes, run concurrently; a rank belongs to at most one lane of a phase
//   Lane            = a group of ranks (its members, in order) running one pass, with the places of the
//                     pass's input and output in each member's global buffers
//   Pass            = RingPass    one permutation of the members per channel: reduce-scatter and/or allgather
//                   | TreePass    one tree over the members per channel: reduce up, broadcast down
//                   | NvlsTreePass NCCL's NVLSTree: in-switch reduce in each node, a tree of nodes per local
//                                rank, in-switch multicast back, pipelined round by round
//                   | SharpPass   in-network (SHARP) reduction across nodes, with direct messages
//                                (CollNetDirect), a chain (CollNetChain) or NVLS inside each node, round by
//                                round
//                   | NvlsPass    NCCL's NVLS inside one NVLink domain: in-switch reduce and/or multicast
//                                of each member's block, round by round
//                   | ExplicitPass programs per member (halving-doubling, chains, loaded JSON, ...)
//
// Ring, tree, NVLSTree, SHARP and NVLS passes hold O(C·P) data or less; their expansion is what the explicit
// planners used to emit, op for op (tests/expansion_test.cpp pins that across the planner matrix). Phases
// join as in NCCL's grouped calls: on each rank, the first op of each channel of a phase (and every op
// without deps) waits for the ops of the rank's previous phase that nothing else waits for (its sinks), which
// orders the whole previous phase first. Scratch is shared between phases (they never overlap in time on a
// rank).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "engine/ir/schedule.hpp"

namespace cclab {

// Where a ring role's data lives on a member, for a range of the pass's full vector: the same offset in
// `buffer`, or (own_block_relative) the offset relative to the start of the member's own block, for buffers
// that hold only that block (reduce_scatter's output, allgather's input).
struct RolePlace {
  Buffer buffer = Buffer::Output;
  bool own_block_relative = false;
  bool operator==(const RolePlace&) const = default;
};

// Ring reduce-scatter and/or allgather over `count` elements (engine/plan/ring_pattern.hpp has the
// steps). Block j of the partition belongs to the member at ring position j-1 of each channel.
struct RingPass {
  bool reduce_scatter = true;
  bool allgather = true;
  std::uint64_t count = 0;
  std::uint64_t chunk_elems = 0;           // pipeline chunk; 0: one chunk per block
  RolePlace contribution{Buffer::Input};   // a member's own input (reduce-scatter)
  RolePlace partial{Buffer::Output};       // running partial sums (reduce-scatter)
  RolePlace reduced{Buffer::Output};       // the member's fully reduced own block; the allgather's source
  RolePlace gathered{Buffer::Output};      // where the allgather delivers every block
  std::uint64_t scratch_count = 0;         // scratch elements each member needs
  std::vector<std::vector<int>> rings;     // rings[c]: members in ring order on channel c
  std::vector<std::vector<int>> position;  // position[c][m]: where member m sits in rings[c]

  int members() const { return rings.empty() ? 0 : static_cast<int>(rings[0].size()); }
  int channels() const { return static_cast<int>(rings.size()); }
  int rounds() const;  // pipeline chunks per block slice
};

// A rooted tree over members 0..n-1: parent (-1 at the root) and children in ascending order.
struct Tree {
  int root = 0;
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
  int depth() const;  // edges on the longest root-to-leaf path
};
Tree tree_from_parents(std::vector<int> parent);

// Tree allreduce (engine/plan/tree_allreduce.hpp): channel c runs trees[c] on its slice of `count`
// elements, reducing up on IR channel 2c and broadcasting down on 2c+1.
struct TreePass {
  std::uint64_t count = 0;
  std::uint64_t chunk_elems = 0;
  std::vector<Tree> trees;  // per channel

  int members() const { return trees.empty() ? 0 : static_cast<int>(trees[0].parent.size()); }
  int channels() const { return static_cast<int>(trees.size()); }
  int rounds() const;
};

// NVLSTree allreduce (engine/plan/nvls_tree_allreduce.hpp): `nodes` × gpus_per_node members, member n·g + m
// being local rank m of node n. Channel c gives local rank m block m of the vector, part c of it, in rounds
// of round_elems / g elements (MemberRounds, engine/ir/passes.hpp); per round, the node's switch reduces the
// round across its GPUs (IR channel 4c, the switch group named by the node's member 0), trees[c] over the
// nodes carries it up (4c+1) and the sum down (4c+2) between the nodes' local rank m, and the switch
// multicasts the sum to the node (4c+3).
struct NvlsTreePass {
  std::uint64_t count = 0;
  std::uint64_t round_elems = 0;  // 0: one round
  int gpus_per_node = 1;
  std::vector<Tree> trees;  // per channel, over the nodes

  int nodes() const { return trees.empty() ? 0 : static_cast<int>(trees[0].parent.size()); }
  int members() const { return nodes() * gpus_per_node; }
  int channels() const { return static_cast<int>(trees.size()); }
};

// In-network reduction across nodes (InfiniBand SHARP through NCCL's CollNet plugin): `nodes` ×
// gpus_per_node members, member n·g + m being local rank m of node n. Channel c gives local rank m block m of
// the vector, part c of it, in rounds of round_elems / g elements (MemberRounds, engine/ir/passes.hpp); local
// rank m of every node is one SHARP group (named by member m, node 0's), which sums the node sums of each
// round across nodes on the channel's network IR channel, at most kPostAhead rounds in flight. Inside nodes:
//   Direct: NCCL's CollNetDirect (engine/plan/collnet_allreduce.hpp). Peers send each other their shares of
//           each round and the results back over point-to-point messages: per channel two IR channels for
//           each pair of local ranks, its scatter (even) and its gather (odd), and two for the network (its
//           switch ops on the even one), g(g−1) + 2. A pair's scatter and gather are the two lanes of one
//           network channel (lanes_per_channel 2), as a tree's up and down are: a round's gather follows its
//           scatter, so they do not split a link between them.
//   Nvls:   NCCL's NVLS across nodes (engine/plan/nvls_sharp_allreduce.hpp). The NVSwitch reduces each round
//           across the node and multicasts the network's sum back: IR channel 2c, the network 2c + 1.
//   Chain:  NCCL's CollNetChain (engine/plan/collnet_chain_allreduce.hpp). Channel c carries part c of the
//           whole vector (not a block per local rank) in rounds of round_elems, down chains[c] (local ranks,
//           the same on every node): the chain reduces each round up to its head chains[c][0] on IR channel
//           2c, the head's SHARP group (the heads of every node, named by node 0's head) sums the node sums
//           on the same IR channel, and the chain broadcasts the result down on 2c + 1: a tree's two lanes.
enum class SharpIntra { Direct, Nvls, Chain };
struct SharpPass {
  SharpIntra intra = SharpIntra::Direct;
  std::uint64_t count = 0;
  std::uint64_t round_elems = 0;  // 0: one round
  int gpus_per_node = 1;
  int nodes = 1;
  int channel_count = 1;
  std::vector<std::vector<int>> chains;  // Chain only: per channel, local ranks from the head down

  int members() const { return nodes * gpus_per_node; }
  int channels() const { return channel_count; }
  // IR channels per channel: Direct g(g−1) + 2, Nvls and Chain 2 (at most INT_MAX: a loaded pass may ask
  // for more, which its check refuses).
  int ir_channels_per_channel() const {
    if (intra != SharpIntra::Direct) return 2;
    const long long g = gpus_per_node;
    return static_cast<int>(std::min<long long>(g * (g - 1) + 2, INT_MAX));
  }
  // Channel c's IR channel for the network's reductions: Direct after its pairs' lanes, Nvls 2c + 1, Chain
  // 2c (its up lane: the head passes the chain's sum on to the network as the chain's links do).
  int network_channel(int c) const {
    if (intra == SharpIntra::Chain) return 2 * c;
    return intra == SharpIntra::Nvls ? 2 * c + 1 : c * ir_channels_per_channel() + 2 * pairs();
  }
  // Chain: channel c's part of the vector, and its rounds.
  ElemRange chain_part(int c) const { return partition(count, channels(), c); }
  int chain_rounds() const;
  // Direct: channel c's IR channel for local ranks a and b's scatter messages (both ways), and their
  // gather's, the next one.
  int scatter_channel(int c, int a, int b) const { return c * ir_channels_per_channel() + 2 * pair(a, b); }
  int gather_channel(int c, int a, int b) const { return scatter_channel(c, a, b) + 1; }

 private:
  int pairs() const { return gpus_per_node * (gpus_per_node - 1) / 2; }
  int pair(int a, int b) const {  // the index of {a, b}, a != b, among the pairs of local ranks
    if (a > b) std::swap(a, b);
    return a * gpus_per_node - a * (a + 1) / 2 + (b - a - 1);
  }
};

// NVLS inside one NVLink domain (engine/plan/switch_pattern.hpp has why; nvls_allreduce, _reduce_scatter and
// _allgather plan it): member m owns block m of the balanced partition of `count` elements; channel c takes
// part c of every block, in rounds of round_elems / members elements a member (at least 1; 0: one round);
// every member runs as many rounds on a channel as the longest part needs (an instance needs all of them),
// and in each it reduces its range through the switch (SwitchReduce) and/or multicasts it (SwitchStore) on IR
// channel c, the switch group named by member 0. Reduce sources and store destinations sit at the same
// offsets on every member (the switch reaches them all): full-vector places. One member copies its input to
// its output.
struct NvlsPass {
  int member_count = 1;
  int channel_count = 1;
  std::uint64_t count = 0;
  std::uint64_t round_elems = 0;
  bool reduce = true;                    // SwitchReduce of the member's range
  bool store = true;                     // then SwitchStore of it
  RolePlace reduce_src{Buffer::Input};   // every member's contribution
  RolePlace reduce_dst{Buffer::Output};  // the member's reduced range
  RolePlace store_src{Buffer::Output};   // what the member multicasts
  RolePlace store_dst{Buffer::Output};   // where it lands on every member

  int members() const { return member_count; }
  int channels() const { return channel_count; }
  ElemRange part(int member, int channel) const;  // the member's range on a channel
  std::uint64_t round(int channel) const;         // elements a member moves per round on it
  std::uint64_t rounds(int channel) const;        // rounds every member runs on it
};

// Any schedule, as explicit programs of its members (world_size = members).
struct ExplicitPass {
  Schedule programs;
  int members() const { return programs.world_size(); }
};

using Pass = std::variant<RingPass, TreePass, NvlsTreePass, SharpPass, NvlsPass, ExplicitPass>;

// Every consumer that does something per kind visits the pass with a handler for each kind, never a chain of
// get_if, so that a kind one of them leaves out fails to compile:
//   std::visit(PassHandlers{[&](const RingPass& r) { ... }, ..., [&](const ExplicitPass& x) { ... }}, pass)
// (no `auto` catch-all), or with a generic lambda that calls an overload per kind (pass_connections in
// engine/model/compact_cost.cpp), which fails the same way. What each kind has, and where:
// clang-format off
//   expansion, op count       engine/ir/passes.cpp (expand_pass, pass_op_count), engine/ir/<kind>_pass.cpp
//   IR channels, summary      engine/ir/compact.cpp (ir_channels, format_compact_summary)
//   JSON                      engine/ir/schedule_json.cpp (pass_json, and the reader beside it)
//   preconditions             engine/check/preconditions.cpp (check_compact, pass_extents)
//   α-β time, ports, network  engine/model/compact_cost.cpp
//   simulation by pattern     sim/simulator.cpp (which kinds: simulates_by_pattern, sim/simulator.hpp)
// clang-format on
template <class... Handlers>
struct PassHandlers : Handlers... {
  using Handlers::operator()...;
};
template <class... Handlers>
PassHandlers(Handlers...) -> PassHandlers<Handlers...>;
// "ring", "tree", "nvls_tree", "collnet", "collnet_chain" or "nvls_sharp" (a SharpPass: Direct, Chain or
// Nvls), "nvls", "explicit"
std::string_view pass_name(const Pass& pass);

// Where a pass's buffer lives in a member's global buffers: `buffer` at `offset`, plus, when member_blocks
// > 0, the offset of the member's block in the balanced partition of `blocks_of` elements into
// member_blocks parts (hierarchical: local rank l's block of the node's vector).
struct BufferPlace {
  Buffer buffer = Buffer::Input;
  std::uint64_t offset = 0;
  int member_blocks = 0;
  std::uint64_t blocks_of = 0;
  std::uint64_t offset_for(int member) const;
  bool operator==(const BufferPlace&) const = default;
};

struct Lane {
  std::vector<int> ranks;  // global rank of each member
  BufferPlace input{Buffer::Input};
  BufferPlace output{Buffer::Output};
  std::shared_ptr<const Pass> pass;  // shared by lanes that run the same pass (every node's intra ring)
};

struct Phase {
  std::vector<Lane> lanes;
};

// Typed planner parameters: consumers read these, never strings.
struct PlanParams {
  std::uint64_t chunk_bytes = 0;
  std::optional<int> channels;       // as the planner states it (tree: its tree count), else from the passes
  int lanes_per_channel = 1;         // IR channels that make up one network channel (tree: up and down)
  std::optional<std::string> inter;  // hierarchical: the inter-node algorithm
  int kernels = 1;                   // launched one after another by each rank (Schedule::kernels)
};

class CompactSchedule {
 public:
  CollectiveSpec spec;
  std::string algorithm;
  PlanParams params;

  CompactSchedule() = default;
  CompactSchedule(CollectiveSpec spec, std::string algorithm);

  int world_size() const { return spec.world_size; }
  const std::vector<Phase>& phases() const { return phases_; }
  // Starts a new phase; later lanes join it.
  void next_phase();
  // Adds a lane to the current phase (the first call starts phase 0). Members must be valid ranks, not in
  // another lane of the phase, and as many as the pass has (PlanError otherwise: a planner bug).
  void add_lane(Lane lane);

  // Where `rank` takes part in `phase`: {lane, member}, or nullopt.
  struct Slot {
    int lane = -1;
    int member = -1;
  };
  std::optional<Slot> slot(int phase, int rank) const;

  // Network channels: the most any pass uses (IR channels / lanes_per_channel), or params.channels.
  int num_channels() const;
  // IR channels the expansion uses: 1 + the highest channel of any op.
  int num_ir_channels() const;

 private:
  std::vector<Phase> phases_;
  std::vector<std::vector<Slot>> slots_;  // per phase, per rank
};

// A schedule of one lane running `pass` over every rank of `spec` (member r is rank r), buffers in place.
CompactSchedule one_lane(const CollectiveSpec& spec, std::string algorithm, Pass pass);

// One rank's explicit program: the only bridge from the compact form to the explicit semantics.
Program expand(const CompactSchedule& schedule, int rank);
// Every rank's program, with the params rendered for printing (engine/ir/schedule.hpp's form). Refuses up
// front (ConfigError) when count_explicit_ops · kExplicitBytesPerOp exceeds the memory budget.
Schedule to_explicit(const CompactSchedule& schedule);
// A schedule holding only `rank`'s program (the others empty), with the params rendered: what a real rank
// runs. Its row is the same as to_explicit's.
Schedule own_row(const CompactSchedule& schedule, int rank);
// The explicit form as a single explicit pass, for schedules that arrive explicit (loaded JSON).
CompactSchedule from_explicit(Schedule schedule);

// The number of ops expansion yields: exact, without expanding, saturating at UINT64_MAX / 256.
std::uint64_t count_explicit_ops(const CompactSchedule& schedule);
// What the explicit form takes per op: the op (64 bytes), its deps, and the state the verifier and the α-β
// walk keep beside it; measured at 4.7 GB peak for the 33.5 M ops of `cclab plan --topology dgx_a100:128
// --algo ring --size 1GiB` on the explicit walk.
inline constexpr std::uint64_t kExplicitBytesPerOp = 140;

// "channel 0: 0 1 2 3 ..." per ring channel and tree parents per tree channel, straight from the passes.
std::string format_compact_summary(const CompactSchedule& schedule, int max_items = 64);

}  // namespace cclab
