// `cclab calibrate` (under mpirun or srun): measures one-way point-to-point time between rank 0 and every
// other rank (ping-pong, half the round trip, over the transport the executor uses: MPI, or NCCL between
// GPUs with --transport nccl), fits α and β
// for ranks on rank 0's node and for ranks on other nodes, and writes a topology YAML with those values and
// the fits' residuals — the input of `cclab sim`, `predict` and `bench --predict`.
#include <algorithm>
#include <climits>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/transports.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "real/calibration.hpp"
#include "real/mpi_transport.hpp"
#include "topology/yaml_io.hpp"

namespace cclab::cli {
namespace {

struct CalibrateArgs {
  std::string out = "calibrated.yaml";
  std::string min_bytes = "8";
  std::string max_bytes = "64MiB";
  int factor = 4;
  int iters = 20;
  std::string transport = "mpi";
  double timeout_s = 60;
};

// Blocks until `request` completes; BackendError after `timeout_s` without completion.
void wait(real::Transport& t, real::Transport::Request request, int peer, double timeout_s) {
  const double start = MPI_Wtime();
  while (!t.test(request)) {
    if (MPI_Wtime() - start > timeout_s)
      throw BackendError(fmt::format("{}: no answer from rank {} in {} s", t.name(), peer, timeout_s));
  }
}

// One-way times for each size between rank 0 and `peer`; every rank calls it, only the pair works.
std::vector<real::Sample> ping_pong(real::Transport& t, int peer, const std::vector<std::uint64_t>& sizes,
                                    int iters, double timeout_s) {
  std::vector<real::Sample> samples;
  const int rank = t.rank();
  real::check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  if (rank != 0 && rank != peer) return samples;
  const int other = rank == 0 ? peer : 0;
  const std::size_t capacity = sizes.empty() ? 0 : sizes.back();
  const std::unique_ptr<void, std::function<void(void*)>> buffer(t.allocate(capacity),
                                                                 [&t](void* p) { t.deallocate(p); });
  for (const std::uint64_t bytes : sizes) {
    auto send = [&] {
      const auto request = t.isend(other, 0, buffer.get(), bytes);
      t.flush();
      wait(t, request, other, timeout_s);
    };
    auto receive = [&] {
      const auto request = t.irecv(other, 0, buffer.get(), bytes);
      t.flush();
      wait(t, request, other, timeout_s);
    };
    auto round = [&] {
      if (rank == 0) {
        send();
        receive();
      } else {
        receive();
        send();
      }
    };
    for (int i = 0; i < 2; ++i)
      round();  // warm-up: connection set-up and first-touch of the buffers
    // Several short repetitions, keeping the fastest: the machine is shared, and interference only adds time.
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

void run_calibrate(const CalibrateArgs& args) {
  int argc = 0;
  char** argv = nullptr;
  real::MpiWorld world(&argc, &argv);
  try {
    const std::unique_ptr<real::Transport> transport = make_transport(args.transport, world);
    transport->reserve_channels(1);
    if (world.size() < 2) throw ConfigError("calibrate needs at least 2 ranks (mpirun -np 2 or more)");
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t b = parse_size_bytes(args.min_bytes); b <= parse_size_bytes(args.max_bytes);
         b *= args.factor)
      sizes.push_back(b);
    if (sizes.size() < 2 || args.factor < 2)
      throw ConfigError("calibrate needs -f >= 2 and at least two sizes");
    if (sizes.back() > static_cast<std::uint64_t>(INT_MAX)) throw ConfigError("-e must stay below 2 GiB");
    std::vector<int> nodes(world.size());
    int node = world.node();
    MPI_Allgather(&node, 1, MPI_INT, nodes.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<real::Sample> intra, inter;
    for (int peer = 1; peer < world.size(); ++peer) {
      const auto samples = ping_pong(*transport, peer, sizes, args.iters, args.timeout_s);
      auto& into = nodes[peer] == nodes[0] ? intra : inter;
      into.insert(into.end(), samples.begin(), samples.end());
    }
    if (world.rank() != 0) return;
    // Rank 0 on a node of its own has no intra-node peers: then the inter fit stands for both.
    const real::LinearFit intra_fit = real::fit_alpha_beta(intra.empty() ? inter : intra);
    std::optional<real::LinearFit> inter_fit;
    if (!inter.empty()) inter_fit = real::fit_alpha_beta(inter);
    const topo::Topology topology =
        real::calibrated_topology(world.nodes(), world.local_size(), intra_fit, inter_fit);
    auto describe = [](const char* what, const real::LinearFit& f) {
      return fmt::format("# {}: alpha {} beta {} ({} samples; relative residual rms {:.1f}%, max {:.1f}%)\n",
                         what, format_time(f.alpha_s), format_bandwidth(f.beta_Bps), f.samples,
                         100 * f.rms_rel_residual, 100 * f.max_rel_residual);
    };
    std::string header = fmt::format(
        "# Written by `cclab calibrate` on {} ranks ({} nodes): one-way {} point-to-point times from rank 0, "
        "{} to {} bytes, fitted as t = alpha + bytes / beta.\n",
        world.size(), world.nodes(), transport->name(), sizes.front(), sizes.back());
    header += describe("intra-node", intra_fit);
    if (inter_fit) header += describe("inter-node", *inter_fit);
    std::ofstream out(args.out);
    out << header << topo::dump_topology_yaml(topology);
    if (!out) throw ConfigError(fmt::format("{}: cannot write the calibrated topology", args.out));
    fmt::print("{}", header);
    fmt::print("{:>12} {:>14} {:>14} {:>9}\n", "bytes", "measured(us)", "fit(us)", "residual");
    for (const auto* list : {&intra, &inter}) {
      for (const real::Sample& s : *list) {
        const real::LinearFit& f = list == &intra ? intra_fit : *inter_fit;
        const double model = f.alpha_s + s.bytes / f.beta_Bps;
        fmt::print("{:>12} {:>14.3f} {:>14.3f} {:>+8.1f}%\n", s.bytes, s.seconds * 1e6, model * 1e6,
                   100 * (model - s.seconds) / s.seconds);
      }
    }
    fmt::print("# wrote {}\n", args.out);
  } catch (const ConfigError& e) {
    if (world.rank() == 0) fmt::print(stderr, "cclab: error: {}\n", e.what());
    throw ExitStatus{1};
  } catch (const Error& e) {
    fmt::print(stderr, "cclab: error: rank {}: {}\n", world.rank(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Measure point-to-point latency and bandwidth under mpirun and write a calibrated topology");
  cmd->add_option("--out", args->out, "topology YAML to write")->capture_default_str();
  cmd->add_option("-b,--minbytes", args->min_bytes, "smallest message")->capture_default_str();
  cmd->add_option("-e,--maxbytes", args->max_bytes, "largest message")->capture_default_str();
  cmd->add_option("-f,--stepfactor", args->factor, "size multiplier")->capture_default_str();
  cmd->add_option("-n,--iters", args->iters, "round trips per repetition")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--transport", args->transport, kTransportHelp)->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "seconds to wait for the peer before giving up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->callback([args] { run_calibrate(*args); });
}

}  // namespace cclab::cli
