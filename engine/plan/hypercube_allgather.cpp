#include "engine/plan/hypercube_allgather.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/plan/patterns.hpp"

namespace cclab::planners {
namespace {

// Blocks first .. first + n − 1 of the output, one contiguous range (a sub-cube's blocks are adjacent).
ElemRange block_run(const CollectiveSpec& spec, int first, int n) {
  const ElemRange a = partition(spec.count, spec.world_size, first);
  const ElemRange z = partition(spec.count, spec.world_size, first + n - 1);
  return {a.offset, z.end() - a.offset};
}

// The ops that wrote a rank's output so far, by range: disjoint, keyed by first element.
class Writers {
 public:
  void add(const Chunk& c, OpId op) {
    if (c.count > 0) by_offset_[c.offset] = {c.offset + c.count, op};  // an empty piece writes nothing
  }
  // Every writer of an element of `c`.
  void of(const Chunk& c, std::vector<OpId>& out) const {
    auto it = by_offset_.upper_bound(c.offset);
    if (it != by_offset_.begin()) --it;
    for (; it != by_offset_.end() && it->first < c.offset + c.count; ++it)
      if (it->second.end > c.offset) out.push_back(it->second.op);
  }

 private:
  struct Write {
    std::uint64_t end;
    OpId op;
  };
  std::map<std::uint64_t, Write> by_offset_;
};

}  // namespace

std::uint64_t hypercube_allgather_ops(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  const std::uint64_t world = std::max(1, spec.world_size), lanes = std::max(1, channels);
  const std::uint64_t block = spec.count / world + 1;
  // A transfer of `elems` is cut into a part per channel, each in pipeline chunks.
  auto pieces = [&](std::uint64_t elems) {
    return lanes * static_cast<std::uint64_t>(chunk_rounds(elems / lanes + 1, chunk_elems));
  };
  std::uint64_t per_rank = pieces(block);  // the own block's copy
  for (std::uint64_t mask = 1; mask < world; mask <<= 1)
    per_rank += 2 * pieces(mask * block);  // a send and a receive of 2^k blocks
  return world * per_rank;
}

Schedule hypercube_allgather(const CollectiveSpec& spec, int channels, std::uint64_t chunk_elems) {
  Schedule s = empty_schedule(spec, "hypercube");
  channels = std::max(1, channels);
  s.network_channels = channels;
  s.params["channels"] = std::to_string(channels);
  const int world = spec.world_size;
  if (world < 1 || (world & (world - 1)) != 0)
    throw PlanError(fmt::format("the hypercube allgather needs a power-of-two world, not {} ranks", world));
  // A group of ncclSend/ncclRecv per step, each its own kernel on the stream: log2 P launches in a row.
  s.kernels = std::max(1, std::countr_zero(static_cast<unsigned>(world)));
  if (s.kernels != 1) s.params["kernels"] = std::to_string(s.kernels);
  const std::uint64_t ops = hypercube_allgather_ops(spec, channels, chunk_elems);
  require_block_exchange_fits(spec, ops, "the hypercube allgather",
                              "fewer ranks, or fewer chunks (--chunk): the plan is explicit, every rank's "
                              "program built and checked");
  const std::vector<int> all = peer_channels(0, 1, channels);  // a step's one peer takes every channel
  for (int r = 0; r < world; ++r) {
    ProgramBuilder b(s.ranks[r]);
    const ElemRange own = partition(spec.count, world, r);
    // The rank's own block into its place first (nccl-tests' cudaMemcpyAsync before the groups; in place it
    // is already there: a copy onto itself), split over the channels as a transfer is, so that it runs at the
    // GPU's copy rate and not at one channel's share of it.
    Writers writers;
    // The ops the next step's kernel starts after: the copy's, then a step's last send and receive, per
    // channel.
    std::vector<OpId> stream;
    {
      const std::vector<P2pPiece> from = p2p_pieces({0, own.count}, Buffer::Input, all, chunk_elems);
      const std::vector<P2pPiece> to = p2p_pieces(own, Buffer::Output, all, chunk_elems);
      std::vector<OpId> last_copy(channels, kNoOp);
      for (std::size_t i = 0; i < from.size(); ++i) {
        last_copy[from[i].channel] = b.copy(from[i].chunk, to[i].chunk, {}, from[i].channel);
        writers.add(to[i].chunk, last_copy[from[i].channel]);
      }
      for (const OpId op : last_copy)
        if (op != kNoOp) stream.push_back(op);
    }
    for (int mask = 1; mask < world; mask <<= 1) {
      const int partner = r ^ mask, held = r & ~(mask - 1), coming = held ^ mask;
      std::vector<OpId> last_send(channels, kNoOp), last_recv(channels, kNoOp);
      std::vector<bool> started(channels, false);
      std::vector<OpId> deps;
      auto step_deps = [&](int channel) {
        if (!started[channel]) deps.insert(deps.end(), stream.begin(), stream.end());
        started[channel] = true;
      };
      for (const P2pPiece& p : p2p_pieces(block_run(spec, held, mask), Buffer::Output, all, chunk_elems)) {
        deps.clear();
        step_deps(p.channel);
        writers.of(p.chunk, deps);
        std::sort(deps.begin(), deps.end());  // a writer may be among the stream's ops too
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        last_send[p.channel] = b.send(partner, p.channel, p.chunk, deps);
      }
      std::vector<std::pair<Chunk, OpId>> received;
      for (const P2pPiece& p : p2p_pieces(block_run(spec, coming, mask), Buffer::Output, all, chunk_elems)) {
        deps.clear();
        step_deps(p.channel);
        last_recv[p.channel] = b.recv(partner, p.channel, p.chunk, deps);
        received.emplace_back(p.chunk, last_recv[p.channel]);
      }
      for (const auto& [chunk, op] : received)
        writers.add(chunk, op);
      stream.clear();
      for (int c = 0; c < channels; ++c)
        for (const OpId op : {last_send[c], last_recv[c]})
          if (op != kNoOp) stream.push_back(op);
    }
  }
  return s;
}

Algorithm hypercube_allgather_algorithm() {
  // Not one of NCCL's allgather algorithms: what nccl-tests' hypercube_perf builds from ncclSend/ncclRecv.
  return Algorithm{
      .name = "hypercube",
      .collective = Collective::AllGather,
      .description =
          "recursive doubling: log2 P grouped exchanges with rank r XOR 2^k (nccl-tests' hypercube_perf)",
      // A partner per bit of the rank, so a power-of-two world (nccl-tests' hypercube_perf skips others).
      .supports =
          [](const CollectiveSpec& spec, const topo::Topology& t, const PlanOptions& o) {
            if (auto s = any_world(spec, t, o); !s.ok) return s;
            if ((spec.world_size & (spec.world_size - 1)) != 0)
              return Support::no(
                  fmt::format("the hypercube needs a power-of-two world ({} ranks here)", spec.world_size));
            return Support::yes();
          },
      .compact =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return explicit_plan(hypercube_allgather(s, channels_or(o, ring_channels(s, t)), chunk_of(o, s)));
          },
      .default_channels = ring_channels,
      .unplanned_ops =
          [](const CollectiveSpec& s, const topo::Topology& t, const PlanOptions& o) {
            return hypercube_allgather_ops(s, channels_or(o, ring_channels(s, t)), chunk_of(o, s));
          }};
}

}  // namespace cclab::planners
