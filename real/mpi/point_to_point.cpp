#include "real/mpi/point_to_point.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "engine/exec/reduce_kernels.hpp"
#include "real/mpi/transport.hpp"

namespace cclab::real {
namespace {

// Blocks until `request` completes; BackendError after `timeout_s` without completion.
void wait(Transport& t, Transport::Request request, int peer, double timeout_s) {
  const double start = MPI_Wtime();
  while (!t.test(request)) {
    if (MPI_Wtime() - start > timeout_s)
      throw BackendError(fmt::format("{}: no answer from rank {} in {} s", t.name(), peer, timeout_s));
  }
}

// One-way times for each size between this rank and `other` (-1: this rank sits out); every rank calls it.
// The lower rank of a pair sends first.
std::vector<Sample> ping_pong(Transport& t, int other, const std::vector<std::uint64_t>& sizes, int iters,
                              double timeout_s) {
  std::vector<Sample> samples;
  const int rank = t.rank();
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  if (other < 0) return samples;
  const bool first = rank < other;
  const std::size_t capacity = sizes.empty() ? 0 : sizes.back();
  const std::unique_ptr<void, std::function<void(void*)>> buffer(t.allocate(capacity),
                                                                 [&t](void* p) { t.deallocate(p); });
  auto transfer = [&](bool send, std::uint64_t bytes) {
    const auto request =
        send ? t.isend(other, 0, buffer.get(), bytes) : t.irecv(other, 0, buffer.get(), bytes);
    t.flush();
    wait(t, request, other, timeout_s);
  };
  for (const std::uint64_t bytes : sizes) {
    auto round = [&] {
      transfer(first, bytes);
      transfer(!first, bytes);
    };
    for (int i = 0; i < 2; ++i)
      round();  // warm-up: connection set-up and first touch of the buffers
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      const double start = MPI_Wtime();
      for (int i = 0; i < iters; ++i)
        round();
      best = std::min(best, (MPI_Wtime() - start) / iters / 2);
    }
    samples.push_back({bytes, best});
  }
  return samples;
}

// One-way times for each size when every rank at once sends to rank + distance and receives from rank -
// distance (mod P): a ring step, every rank moving data as in a collective. The step's time is the one-way
// time under that load.
std::vector<Sample> ring_exchange(Transport& t, int distance, const std::vector<std::uint64_t>& sizes,
                                  int iters, double timeout_s) {
  int P = 1;
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &P), "MPI_Comm_size");
  const int rank = t.rank();
  const int next = (rank + distance) % P, prev = ((rank - distance) % P + P) % P;
  const std::size_t capacity = sizes.empty() ? 0 : sizes.back();
  auto deleter = [&t](void* p) { t.deallocate(p); };
  const std::unique_ptr<void, std::function<void(void*)>> out(t.allocate(capacity), deleter);
  const std::unique_ptr<void, std::function<void(void*)>> in(t.allocate(capacity), deleter);
  std::vector<Sample> samples;
  for (const std::uint64_t bytes : sizes) {
    auto step = [&] {
      const auto sent = t.isend(next, 0, out.get(), bytes);
      const auto got = t.irecv(prev, 0, in.get(), bytes);
      t.flush();
      wait(t, sent, next, timeout_s);
      wait(t, got, prev, timeout_s);
    };
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    for (int i = 0; i < 2; ++i)
      step();  // warm-up: connection set-up and first touch of the buffers
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
      const double start = MPI_Wtime();
      for (int i = 0; i < iters; ++i)
        step();
      double elapsed = (MPI_Wtime() - start) / iters;
      // The step of the slowest rank: a collective waits for it.
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                "MPI_Allreduce");
      best = std::min(best, elapsed);
    }
    samples.push_back({bytes, best});
  }
  return samples;
}

}  // namespace

PointToPointSamples measure_point_to_point(const MpiWorld& world, Transport& transport,
                                           const std::vector<std::uint64_t>& sizes, int iters,
                                           double timeout_s, Load load) {
  if (world.size() < 2) throw ConfigError("calibration needs at least 2 ranks (mpirun -np 2 or more)");
  transport.reserve_channels(1);
  std::vector<int> nodes(world.size());
  int node = world.node();
  check_mpi(MPI_Allgather(&node, 1, MPI_INT, nodes.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  PointToPointSamples result;
  const int P = world.size(), rank = world.rank();
  if (load == Load::AllRanksAtOnce) {
    // Neighbours on the node (distance 1, when rank 1 shares rank 0's node), then, with several nodes, the
    // same local rank of the next node (distance: ranks per node).
    if (nodes[1 % P] == nodes[0]) {
      auto samples = ring_exchange(transport, 1, sizes, iters, timeout_s);
      if (rank == 0) result.intra = std::move(samples);
    }
    if (world.nodes() > 1) {
      auto samples = ring_exchange(transport, world.local_size(), sizes, iters, timeout_s);
      if (rank == 0) result.inter = std::move(samples);
    }
    return result;
  }
  for (int peer = 1; peer < P; ++peer) {
    const int other = rank == 0 ? peer : (rank == peer ? 0 : -1);
    const auto samples = ping_pong(transport, other, sizes, iters, timeout_s);
    if (rank != 0) continue;
    auto& into = nodes[peer] == nodes[0] ? result.intra : result.inter;
    into.insert(into.end(), samples.begin(), samples.end());
  }
  return result;
}

Calibration fit_calibration(const MpiWorld& world, const PointToPointSamples& samples) {
  // Rank 0 on a node of its own has no intra-node peers: then the inter fit stands for both.
  const LinearFit intra = fit_alpha_beta(samples.intra.empty() ? samples.inter : samples.intra);
  std::optional<LinearFit> inter;
  if (!samples.inter.empty()) inter = fit_alpha_beta(samples.inter);
  // Converts in place inside make_shared (guaranteed copy elision), so the graph is built once.
  struct Build {
    const MpiWorld& world;
    const LinearFit& intra;
    const std::optional<LinearFit>& inter;
    operator topo::Topology() const {
      return calibrated_topology(world.nodes(), world.local_size(), intra, inter);
    }
  };
  return {intra, inter, std::make_shared<const topo::Topology>(Build{world, intra, inter})};
}

double measure_reduce_throughput(const MpiWorld& world) {
  const std::size_t n = 1 << 20;
  std::vector<float> a(n, 1.0f), b(n, 2.0f);
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const double start = MPI_Wtime();
    reduce(DType::F32, ReduceOp::Sum, a.data(), a.data(), b.data(), n);
    best = std::min(best, MPI_Wtime() - start);
  }
  // A core's rate; where the node's ranks outnumber its cores, each rank gets its share of one.
  const double share = std::min(1.0, static_cast<double>(world.local_cores()) / world.local_size());
  return n * 4 / best * share;
}

}  // namespace cclab::real
