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
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/transports.hpp"
#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/measure/compare.hpp"
#include "engine/measure/log_calibration.hpp"
#include "real/calibration.hpp"
#include "real/mpi/point_to_point.hpp"
#include "real/mpi/transport.hpp"
#include "real/transports.hpp"
#include "topology/presets.hpp"
#include "topology/yaml_io.hpp"

namespace cclab::cli {
namespace {

struct CalibrateArgs {
  std::string out = "calibrated.yaml";
  // --from-nccl-tests: fit the topology's link model to nccl-tests logs instead of measuring (no MPI).
  std::vector<std::string> logs;
  std::string topology = "auto";
  std::string algorithm = "ring";
  std::string protocol = "auto";  // as `cclab compare` prices messages, so that the round trip holds
  std::string collective;
  std::string min_bytes = "8";
  std::string max_bytes = "64MiB";
  int factor = 4;
  int iters = 20;
  std::string transport = "mpi";
  double timeout_s = 60;
  std::string load = "isolated";  // or "all": every rank at once (real::Load)
  bool algorithm_given = false, protocol_given = false;
};

int run_calibrate(const CalibrateArgs& args, real::MpiWorld& world) {
  {
    const std::unique_ptr<Transport> transport = real::make_transport(args.transport, world);
    if (world.size() < 2) throw ConfigError("calibrate needs at least 2 ranks (mpirun -np 2 or more)");
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t b = parse_size_bytes(args.min_bytes); b <= parse_size_bytes(args.max_bytes);
         b *= args.factor)
      sizes.push_back(b);
    if (sizes.size() < 2 || args.factor < 2)
      throw ConfigError("calibrate needs -f >= 2 and at least two sizes");
    if (sizes.back() > static_cast<std::uint64_t>(INT_MAX)) throw ConfigError("-e must stay below 2 GiB");
    const real::Load load = args.load == "all" ? real::Load::AllRanksAtOnce : real::Load::Isolated;
    const real::PointToPointSamples samples =
        real::measure_point_to_point(world, *transport, sizes, args.iters, args.timeout_s, load);
    if (world.rank() != 0) return 0;
    const real::Calibration calibration = real::fit_calibration(world, samples);
    const real::LinearFit& intra_fit = calibration.intra;
    const std::optional<real::LinearFit>& inter_fit = calibration.inter;
    const topo::Topology& topology = *calibration.topology;
    const std::vector<real::Sample>& intra = samples.intra.empty() ? samples.inter : samples.intra;
    const std::vector<real::Sample> inter =
        samples.intra.empty() ? std::vector<real::Sample>{} : samples.inter;
    auto describe = [](const char* what, const real::LinearFit& f) {
      return fmt::format("# {}: alpha {} beta {} ({} samples; relative residual rms {:.1f}%, max {:.1f}%)\n",
                         what, format_time(f.alpha_s), format_bandwidth(f.beta_Bps), f.samples,
                         100 * f.rms_rel_residual, 100 * f.max_rel_residual);
    };
    std::string header = fmt::format(
        "# Written by `cclab calibrate` on {} ranks ({} nodes): one-way {} point-to-point times {}, "
        "{} to {} bytes, fitted as t = alpha + bytes / beta.\n",
        world.size(), world.nodes(), transport->name(),
        load == real::Load::Isolated ? "from rank 0 to each peer in turn"
                                     : "with every rank sending to its neighbour at once (--load all)",
        sizes.front(), sizes.back());
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
  }
  return 0;
}

// The link model of the kind that bounds the logged collective, fitted so that the α-β model reproduces the
// logs (engine/measure/log_calibration.hpp), written into the topology's YAML.
void run_calibrate_from_logs(const CalibrateArgs& args) {
  std::vector<NcclTestsLog> logs;
  for (const std::string& path : args.logs)
    logs.push_back(read_nccl_tests_log(path));
  std::optional<Collective> collective;
  if (!args.collective.empty()) {
    collective = parse_collective(args.collective);
    if (!collective) {
      throw ConfigError(
          fmt::format("--collective '{}' is unknown (valid: {})", args.collective, kCollectiveNames));
    }
  }
  // `auto`: the machine of the logs' device lines (preset_for_log), one for all of them.
  std::string spec = args.topology;
  if (spec == "auto") {
    spec = preset_for_log(logs.front());
    for (const NcclTestsLog& log : logs)
      if (const std::string other = preset_for_log(log); other != spec)
        throw ConfigError(fmt::format("--topology auto: {} ran on {}, {} on {}; fit one machine at a time",
                                      logs.front().source, spec, log.source, other));
    fmt::print(stderr, "cclab: fitting {}, the machine of the logs' device lines\n", spec);
  }
  const std::shared_ptr<topo::Topology> topology = topo::load_topology_mutable(spec);
  // Fitted to a machine other than the one measured, the constants would absorb the difference.
  for (const NcclTestsLog& log : logs) {
    for (const std::string& m : machine_mismatches(log, *topology))
      fmt::print(stderr, "cclab: warning: {}: {}\n", log.source, m);
    for (const std::string& m : log.notes)
      fmt::print(stderr, "cclab: warning: {}: {}\n", log.source, m);
  }
  CostParams cost;
  const auto protocol = parse_protocol(args.protocol);
  if (!protocol) {
    throw ConfigError(fmt::format("--protocol '{}' is unknown (valid: {})", args.protocol, kProtocolNames));
  }
  // What the logs forced NCCL to (as `cclab compare` reads them), unless given: the same for every log.
  std::optional<LogChoice> choice;
  std::vector<std::map<std::uint64_t, RowChoice>> by_size;
  for (const NcclTestsLog& log : logs) {
    LogChoice c =
        choice_for_log(log, collective, args.algorithm_given ? std::optional(args.algorithm) : std::nullopt,
                       args.protocol_given ? protocol : std::nullopt, args.algorithm, *protocol);
    if (choice && (c.algorithm != choice->algorithm || c.protocol != choice->protocol ||
                   c.auto_protocols != choice->auto_protocols)) {
      throw ConfigError(fmt::format(
          "{}: the logs were run with different algorithms or protocols ({} {} here, {} {} before); "
          "calibrate on logs of one, or give --algo and --protocol",
          log.source, c.algorithm, to_string(c.protocol), choice->algorithm, to_string(choice->protocol)));
    }
    by_size.push_back(c.by_size);
    choice = std::move(c);
  }
  cost.protocol = choice->protocol;
  cost.auto_protocols = choice->auto_protocols;
  const LogFit fit =
      fit_link_model(logs, *topology, collective, choice->algorithm, PlanOptions{}, cost, by_size);
  const std::string header = fmt::format(
      "# Written by `cclab calibrate --from-nccl-tests` from {} rows of {} log(s) with algorithm {}{}: the "
      "{} "
      "link model fitted to them, efficiency {:.4f} (was {:.4f}), overhead {} per message (was {}); "
      "median |error| {:.1f}% before, {:.1f}% after.\n",
      fit.rows, logs.size(),
      // NCCL's names select cclab's planners of the same name: say more only where a selection became
      // another.
      fit.planned.size() == 1 && ascii_lowercase(fit.planned[0]) == ascii_lowercase(choice->algorithm)
          ? choice->algorithm
          : fmt::format("{} (rows planned with {})", choice->algorithm, fmt::join(fit.planned, ", ")),
      choice->note, topo::to_string(fit.kind), fit.after.efficiency, fit.before.efficiency,
      format_time(fit.after.overhead_s), format_time(fit.before.overhead_s), 100 * fit.median_error_before,
      100 * fit.median_error_after);
  std::ofstream out(args.out);
  out << header << topo::dump_topology_yaml(*topology);
  if (!out) throw ConfigError(fmt::format("{}: cannot write the calibrated topology", args.out));
  fmt::print("{}# wrote {} (compare: cclab compare LOG --topology {})\n", header, args.out, args.out);
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
  cmd->add_option("--transport", args->transport, real::kTransportHelp)->capture_default_str();
  cmd->add_option("--load", args->load,
                  "isolated: rank 0 with each peer in turn, the links' own alpha and beta; all: every rank "
                  "sends to its neighbour at once, what a collective sees where ranks share cores or memory")
      ->check(CLI::IsMember({"isolated", "all"}))
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "seconds to wait for the peer before giving up")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--from-nccl-tests", args->logs,
                  "fit the link model of --topology to these nccl-tests logs (text or -J JSON) instead of "
                  "measuring; no MPI");
  cmd->add_option(
         "--topology", args->topology,
         "with --from-nccl-tests: the topology to fit (a preset, a YAML file, or auto: the machine of "
         "the logs' device lines, as compare takes it)")
      ->capture_default_str();
  cmd->add_option(
         "--protocol", args->protocol,
         "with --from-nccl-tests: the protocol the model prices messages with, as in `cclab compare`")
      ->capture_default_str();
  cmd->add_option("--algo", args->algorithm,
                  "with --from-nccl-tests: the algorithm the logs measured (default: the logs' NCCL_ALGO "
                  "where NCCL logged it, else ring)")
      ->capture_default_str();
  cmd->add_option("--collective", args->collective,
                  "with --from-nccl-tests: the collective, for logs that do not name it");
  cmd->callback([args, cmd] {
    args->algorithm_given = cmd->count("--algo") > 0;
    args->protocol_given = cmd->count("--protocol") > 0;
    if (!args->logs.empty()) {
      run_calibrate_from_logs(*args);
      return;
    }
    run_under_mpi([&](real::MpiWorld& world) { return run_calibrate(*args, world); });
  });
}

}  // namespace cclab::cli
