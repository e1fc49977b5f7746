// `cclab predict`: scaling of a data-parallel training step over GPU counts and algorithms. Built-in default:
// ResNet-50 on DGX A100 nodes (HDR InfiniBand, one switch), 8 -> 256 GPUs, ring, tree, hierarchical and auto,
// DDP buckets of 25 MiB, allreduce times from the α-β model (or SimGrid with --backend sim).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/cost.hpp"
#include "engine/registry.hpp"
#include "engine/step_model.hpp"
#include "engine/verifier.hpp"
#include "topology/presets.hpp"
#if CCLAB_HAVE_SIMGRID
#include "sim/simulator.hpp"
#endif

namespace cclab::cli {
namespace {

struct PredictArgs {
  std::string workload = "resnet50";
  std::string gpu = "a100";
  std::string topology = "dgx_a100";
  std::vector<int> nodes = {1, 2, 4, 8, 16, 32};
  std::vector<std::string> algorithms = {"ring", "tree", "hierarchical", "auto"};
  std::string fusion = "25MiB";
  bool fp16 = false;
  std::string backend = "ab";
  std::string format = "table";
  std::string out;
};

struct Row {
  int gpus;
  std::string algorithm;
  StepPrediction p;
  std::string used;  // algorithms the buckets used
};

// "dgx_a100" or "dgx_a100,fabric=rail" with the node count inserted: "dgx_a100:8,fabric=rail".
std::string preset_with_nodes(const std::string& topology, int nodes) {
  const auto comma = topology.find(',');
  if (comma == std::string::npos) return fmt::format("{}:{}", topology, nodes);
  return fmt::format("{}:{}{}", topology.substr(0, comma), nodes, topology.substr(comma));
}

// Efficiency vs GPUs, one line per algorithm, as SVG and PNG, when gnuplot is installed (the set-up script
// installs gnuplot-nox). Returns the files written.
std::vector<std::string> plot_efficiency(const std::vector<Row>& rows,
                                         const std::vector<std::string>& algorithms, const std::string& dir,
                                         const std::string& title) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return {};
  std::ofstream data(dir + "/efficiency.dat");
  for (const std::string& algorithm : algorithms) {
    data << "\"" << algorithm << "\"\n";
    for (const Row& r : rows)
      if (r.algorithm == algorithm) data << r.gpus << " " << 100 * r.p.efficiency << "\n";
    data << "\n\n";
  }
  data.close();
  std::ofstream script(dir + "/efficiency.gp");
  script << "set title \"" << title
         << "\" noenhanced\nset xlabel \"GPUs\"\nset ylabel \"scaling efficiency (%)\"\n"
         << "set logscale x 2\nset key bottom left\nset grid\n";
  for (const char* terminal : {"svg size 800,500", "pngcairo size 800,500"}) {
    const std::string ext = std::string(terminal).starts_with("svg") ? "svg" : "png";
    script << "set terminal " << terminal << "\nset output \"" << dir << "/efficiency." << ext << "\"\n"
           << "plot for [i=0:" << algorithms.size() - 1 << "] \"" << dir
           << "/efficiency.dat\" index i using 1:2 with linespoints title columnheader(1)\n";
  }
  script.close();
  const std::string command = fmt::format("gnuplot \"{}/efficiency.gp\" 2>/dev/null", dir);
  if (std::system(command.c_str()) != 0)
    throw BackendError(fmt::format("gnuplot failed on {}/efficiency.gp", dir));
  return {dir + "/efficiency.svg", dir + "/efficiency.png"};
}

void run_predict(const PredictArgs& args) {
  const Workload workload = make_workload(args.workload);
  ComputeProfile compute;
  if (!default_compute(args.workload, args.gpu, compute)) {
    throw ConfigError(
        fmt::format("no default compute profile for {} on {} (known: resnet50/resnet101/bert_large on "
                    "a100, resnet50 on h100)",
                    args.workload, args.gpu));
  }
  if (args.backend != "ab" && args.backend != "sim") throw ConfigError("--backend must be ab or sim");
#if !CCLAB_HAVE_SIMGRID
  if (args.backend == "sim")
    throw ConfigError("--backend sim needs cclab built with SimGrid (libsimgrid-dev)");
#endif
  FusionPolicy fusion;
  try {
    fusion.threshold_bytes = parse_size_bytes(args.fusion);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("--fusion: {}", e.what()));
  }
  fusion.fp16_compression = args.fp16;
  const bool progress = args.format == "table" && ::isatty(STDERR_FILENO);

  std::vector<Row> rows;
  for (int nodes : args.nodes) {
    const topo::Topology topology = topo::make_preset(preset_with_nodes(args.topology, nodes));
    const int gpus = static_cast<int>(topology.gpus().size());
    // One verified schedule, and one time, per (algorithm, bucket size); auto takes the cheapest of them.
    std::map<std::tuple<std::string, std::uint64_t, DType>, double> cache;
    auto time_of = [&](const std::string& algorithm, const CollectiveSpec& bucket) -> std::optional<double> {
      auto key = std::make_tuple(algorithm, bucket.count, bucket.dtype);
      if (auto hit = cache.find(key); hit != cache.end()) return hit->second;
      const CollectiveSpec spec = spec_for(topology, Collective::AllReduce, bucket.count, bucket.dtype);
      Planned planned = plan_collective(spec, topology, algorithm);
      if (!planned.schedule) return std::nullopt;
      verify_or_throw(*planned.schedule);
      double t = estimate_cost(*planned.schedule, topology).total_s;
#if CCLAB_HAVE_SIMGRID
      if (args.backend == "sim") t = sim::simulate(*planned.schedule, topology).total_s;
#endif
      return cache.emplace(key, t).first->second;
    };
    for (const std::string& algorithm : args.algorithms) {
      if (progress) fmt::print(stderr, "\r{} GPUs, {}...            ", gpus, algorithm);
      CollectiveTimer timer = [&](const CollectiveSpec& bucket, std::string& used) {
        if (algorithm != "auto") {
          auto t = time_of(algorithm, bucket);
          if (!t) throw ConfigError(fmt::format("{} does not apply on {} GPUs", algorithm, gpus));
          used = algorithm;
          return *t;
        }
        double best = std::numeric_limits<double>::infinity();
        for (const Algorithm* a : algorithms_for(Collective::AllReduce)) {
          auto t = time_of(a->name, bucket);
          if (t && *t < best) best = *t, used = a->name;
        }
        return best;
      };
      Row row{gpus, algorithm, predict_step(workload, compute, fusion, gpus, timer), ""};
      std::map<std::string, int> counts;
      for (const Bucket& b : row.p.buckets)
        if (!b.algorithm.empty()) ++counts[b.algorithm];
      for (const auto& [name, n] : counts)
        row.used += fmt::format("{}{}x{}", row.used.empty() ? "" : ",", name, n);
      rows.push_back(row);
    }
  }
  if (progress) fmt::print(stderr, "\r{:40}\r", "");

  std::ostringstream csv;
  csv << "gpus,algorithm,step_ms,comm_ms,exposed_ms,samples_per_s,speedup,efficiency,buckets\n";
  nlohmann::json json = nlohmann::json::array();
  for (const Row& r : rows) {
    csv << fmt::format("{},{},{:.3f},{:.3f},{:.3f},{:.1f},{:.2f},{:.4f},{}\n", r.gpus, r.algorithm,
                       r.p.step_s * 1e3, r.p.communication_s * 1e3, r.p.exposed_s * 1e3, r.p.samples_per_s,
                       r.p.speedup, r.p.efficiency, r.used);
    json.push_back({{"gpus", r.gpus},
                    {"algorithm", r.algorithm},
                    {"step_s", r.p.step_s},
                    {"communication_s", r.p.communication_s},
                    {"exposed_s", r.p.exposed_s},
                    {"samples_per_s", r.p.samples_per_s},
                    {"speedup", r.p.speedup},
                    {"efficiency", r.p.efficiency},
                    {"bucket_algorithms", r.used},
                    {"buckets", r.p.buckets.size()}});
  }
  if (args.format == "csv") {
    fmt::print("{}", csv.str());
  } else if (args.format == "json") {
    fmt::print("{}\n", json.dump(2));
  } else {
    fmt::print(
        "# {} on {} nodes ({} GPU compute defaults: {:.1f} ms forward+backward per {}-sample batch), {} "
        "buckets of {}{}, allreduce times from {}\n",
        workload.name, args.topology, args.gpu, (compute.forward_s + compute.backward_s) * 1e3,
        compute.batch_per_gpu, make_buckets(workload, fusion, args.fp16 ? DType::F16 : DType::F32).size(),
        args.fusion, args.fp16 ? " (fp16)" : "", args.backend == "sim" ? "SimGrid" : "the α-β model");
    fmt::print("{:>6} {:<14} {:>10} {:>10} {:>11} {:>12} {:>8} {:>10}  {}\n", "GPUs", "algorithm", "step(ms)",
               "comm(ms)", "exposed(ms)", "samples/s", "speedup", "efficiency", "buckets");
    for (const Row& r : rows) {
      fmt::print("{:>6} {:<14} {:>10.2f} {:>10.2f} {:>11.2f} {:>12.0f} {:>8.1f} {:>9.1f}%  {}\n", r.gpus,
                 r.algorithm, r.p.step_s * 1e3, r.p.communication_s * 1e3, r.p.exposed_s * 1e3,
                 r.p.samples_per_s, r.p.speedup, 100 * r.p.efficiency, r.used);
    }
  }
  if (!args.out.empty()) {
    std::filesystem::create_directories(args.out);
    std::ofstream(args.out + "/predict.csv") << csv.str();
    std::ofstream(args.out + "/predict.json") << json.dump(2) << "\n";
    if (args.format == "table") fmt::print("# wrote {0}/predict.csv and {0}/predict.json\n", args.out);
    const auto plots =
        plot_efficiency(rows, args.algorithms, args.out,
                        fmt::format("{} on {}: scaling efficiency", workload.name, args.topology));
    if (args.format == "table" && !plots.empty()) fmt::print("# plotted {} and {}\n", plots[0], plots[1]);
  }
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd =
      app.add_subcommand("predict", "Predict data-parallel training step time and scaling efficiency");
  cmd->add_option("--workload", args->workload, std::string("workload: ") + std::string(kWorkloadNames))
      ->capture_default_str();
  cmd->add_option("--gpu", args->gpu, "GPU of the compute-time defaults (a100, h100)")->capture_default_str();
  cmd->add_option("--topology", args->topology, "preset name, optionally with keys: dgx_h100,fabric=rail")
      ->capture_default_str();
  cmd->add_option("--nodes", args->nodes, "node counts to sweep")->delimiter(',')->capture_default_str();
  cmd->add_option("--algo", args->algorithms, "allreduce algorithms to compare")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--fusion", args->fusion, "bucket size (DDP's bucket_cap)")->capture_default_str();
  cmd->add_flag("--fp16", args->fp16, "fp16 gradient compression (half the bytes)");
  cmd->add_option("--backend", args->backend, "allreduce times from ab (α-β model) or sim (SimGrid)")
      ->capture_default_str();
  cmd->add_option("--format", args->format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  cmd->add_option("--out", args->out, "also write predict.csv and predict.json to DIR");
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace cclab::cli
