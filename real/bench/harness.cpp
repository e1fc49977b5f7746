// `cclab bench`'s harness (real/bench/harness.hpp): nccl-tests-style benchmark of the engine's schedules run
// by the real executor over MPI, side by side with the native collectives (Open MPI's, and torch c10d's Gloo
// where LibTorch is found), on the same buffers in the same run. Options and output follow nccl-tests (-b -e
// -f -n -w -c -d -o -r; size, count, type, redop, root, then time, algbw, busbw and #wrong out of place and
// in place; "Out of bounds values" and "Avg bus bandwidth" footers), one block per algorithm, then a summary
// of engine/native bus bandwidth per size.
//
// Timing as nccl-tests: after -w warm-up runs, -n runs back to back between two barriers; the time per run is
// averaged over the runs and then over the ranks. Each run is also timed alone on every rank, and a run's
// time is its slowest rank's: their min, median and 99th percentile go to the -J and --csv files (nccl-tests
// has only the mean, which hides a slow outlier). Correctness: a separate checked run first (-c 1), with
// inputs whose results are exact (real/check_data.hpp); any wrong element makes the exit status 1.
#include "real/bench/harness.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "common/files.hpp"
#include "common/units.hpp"
#include "engine/check/verified.hpp"
#include "engine/exec/executor.hpp"
#include "engine/measure/nccl_tests_log.hpp"
#include "engine/model/compact_cost.hpp"
#include "engine/plan/selection.hpp"
#include "real/check_data.hpp"
#include "real/mpi/point_to_point.hpp"
#include "real/mpi/transport.hpp"
#include "real/transports.hpp"
#include "topology/presets.hpp"
#if CCLAB_HAVE_GLOO
#include "real/gloo/collectives.hpp"
#endif
#if CCLAB_HAVE_NCCL
#include "real/nccl/transport.hpp"
#endif

namespace cclab::real {
namespace {

// nccl-tests type names, and cclab's.
DType parse_bench_dtype(const std::string& text) {
  static const std::map<std::string, DType> names{{"float", DType::F32},     {"f32", DType::F32},
                                                  {"half", DType::F16},      {"f16", DType::F16},
                                                  {"bfloat16", DType::BF16}, {"bf16", DType::BF16}};
  const auto it = names.find(text);
  if (it == names.end())
    throw ConfigError(fmt::format("-d '{}': valid types are float, half, bfloat16", text));
  return it->second;
}

const char* nccl_type_name(DType t) {
  return t == DType::F32 ? "float" : t == DType::F16 ? "half" : "bfloat16";
}

struct Measured {
  double time_us = 0;
  std::uint64_t wrong = 0;
  IterationTimes iterations;
};

// Nearest-rank percentiles of the runs' times (sorted in place).
IterationTimes percentiles(std::vector<double>& times_us) {
  std::sort(times_us.begin(), times_us.end());
  auto at = [&](double p) {
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(times_us.size())));
    return times_us[std::clamp<std::size_t>(rank, 1, times_us.size()) - 1];
  };
  return {times_us.front(), at(50), at(99)};
}

// The native collectives measured beside the engine, per transport: on host buffers Open MPI's and torch
// c10d's Gloo (where LibTorch is); on GPU buffers NCCL's.
std::vector<std::string> natives_for(const std::string& transport) {
  if (transport == "nccl") return {"nccl"};
  std::vector<std::string> natives{"mpi"};
  if (CCLAB_HAVE_GLOO) natives.push_back("gloo");
  return natives;
}

std::string describe_algorithm(const std::string& name, const std::string& transport) {
  if (name == "mpi") return " (Open MPI's own collective, native)";
  if (name == "gloo") return " (torch c10d ProcessGroupGloo, native)";
  if (name == "nccl") return " (NCCL's own collective, native)";
  return fmt::format(" (cclab engine, real executor over {})", transport);
}

struct Result {
  double busbw_out = 0, busbw_in = 0;
  std::optional<double> predicted_us;
};

class Bench {
 public:
  Bench(const BenchOptions& args, MpiWorld& world) : args_(args), world_(world) {
    if (args.transport != "mpi") {
      engine_owned_ = make_transport(args.transport, world);
      engine_ = engine_owned_.get();
#if CCLAB_HAVE_NCCL
      nccl_ = dynamic_cast<NcclTransport*>(engine_);
#endif
    }
    natives_ = natives_for(args.transport);
    const auto c = parse_collective(args.collective);
    if (!c)
      throw ConfigError(fmt::format("--collective '{}' (valid: {})", args.collective, kCollectiveNames));
    collective_ = *c;
    dtype_ = parse_bench_dtype(args.dtype);
    const auto op = parse_reduce_op(args.op);
    if (!op) throw ConfigError(fmt::format("-o '{}' (valid: {})", args.op, kReduceOpNames));
    op_ = *op;
    topology_spec_ = args.topology.empty() ? world.derived_topology() : args.topology;
    topology_ = topo::load_topology_shared(topology_spec_);
    if (static_cast<int>(topology_->gpus().size()) != world.size()) {
      throw ConfigError(fmt::format("--topology {} has {} GPUs, the MPI world {} ranks", topology_spec_,
                                    topology_->gpus().size(), world.size()));
    }
    if (!args.predict.empty()) {
      predict_topology_ = topo::load_topology_shared(args.predict);
      if (static_cast<int>(predict_topology_->gpus().size()) != world.size()) {
        throw ConfigError(fmt::format("--predict {} has {} GPUs, the MPI world {} ranks", args.predict,
                                      predict_topology_->gpus().size(), world.size()));
      }
      // Ranks on CPUs reduce on their cores: the model needs the rate this machine reaches (collective).
      if (!engine_->on_device()) cpu_reduce_Bps_ = measure_reduce_throughput(world);
    }
    options_.chunk_bytes = parse_size_bytes(args.chunk);
    options_.channels = args.channels;
    for (const std::string& name : args.algorithms) {
      if (name == "all") {
        // What applies to this topology; the rest is named once, with why, instead of a row of n/a per size.
        const CollectiveSpec probe =
            spec_for(*topology_, collective_, 64ULL * world.size(), dtype_, op_, args.root);
        for (const Algorithm* a : algorithms_for(collective_)) {
          if (const Support s = a->supports(probe, *topology_, options_); s.ok)
            names_.push_back(a->name);
          else
            skipped_.push_back(fmt::format("{} ({})", a->name, s.reason));
        }
        names_.insert(names_.end(), natives_.begin(), natives_.end());
      } else if (is_native(name) || find_algorithm(collective_, name)) {
        names_.push_back(name);
      } else {
        throw ConfigError(fmt::format("--algo '{}' (valid with --transport {}: all, {}, {})", name,
                                      args.transport, fmt::join(natives_, ", "),
                                      algorithm_names(collective_)));
      }
    }
    // Argument errors before any set-up or output (Gloo's set-up would fail on the ranks that wait for a peer
    // that already left with this error).
    if (args.factor < 2) throw ConfigError("-f must be at least 2");
    if (parse_size_bytes(args.min_bytes) > parse_size_bytes(args.max_bytes))
      throw ConfigError("-b is larger than -e");
    if ((!args.json.empty() || !args.csv.empty()) && names_.size() != 1)
      throw ConfigError("-J and --csv write one algorithm's rows, as nccl-tests does: give --algo NAME");
#if CCLAB_HAVE_GLOO
    if (std::find(names_.begin(), names_.end(), "gloo") != names_.end())
      gloo_ = std::make_unique<GlooCollectives>(world, args.timeout_s);
#endif
  }

  int run() {
    const std::uint64_t min_bytes = parse_size_bytes(args_.min_bytes),
                        max_bytes = parse_size_bytes(args_.max_bytes);
    header();
    if (!skipped_.empty())
      print0("# --algo all: {} do not apply here: {}\n", skipped_.size(), fmt::join(skipped_, "; "));
    const std::size_t elem = dtype_size_bytes(dtype_);
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t b = std::max<std::uint64_t>(min_bytes, elem); b <= max_bytes; b *= args_.factor) {
      sizes.push_back(b / elem * elem);
      if (b > max_bytes / args_.factor) break;
    }
    std::map<std::string, std::map<std::uint64_t, Result>> results;
    std::uint64_t wrong_total = 0;
    NcclTestsLog log;
    log.program = nccl_tests_program(collective_, names_.size() == 1 ? names_[0] : "");
    log.collective = collective_;
    log.ranks = world_.size();
    log.source = topology_spec_;
    for (const std::string& name : names_) {
      print0("#\n# algorithm: {}{}\n", name, describe_algorithm(name, args_.transport));
      table_header();
      double busbw_sum = 0;
      std::uint64_t wrong = 0;
      for (const std::uint64_t bytes : sizes) {
        std::uint64_t count = bytes / elem;
        // An alltoall moves equal blocks: as nccl-tests, the count rounds down to a multiple of the ranks.
        if (collective_ == Collective::AllToAll) count -= count % static_cast<std::uint64_t>(world_.size());
        const CollectiveSpec spec = spec_for(*topology_, collective_, count, dtype_, op_, args_.root);
        if (spec.count == 0 && collective_ == Collective::AllToAll) {
          print0("{:>12} {:>12}  n/a: fewer elements than ranks\n", bytes, spec.count);
          continue;
        }
        std::optional<Schedule> schedule;  // this rank's row only: a rank never expands the others
        std::optional<VerifiedSchedule> verified;
        if (name == "gloo") {
#if CCLAB_HAVE_GLOO
          if (auto why = GlooCollectives::unsupported(spec)) {
            print0("{:>12} {:>12}  n/a: {}\n", bytes, spec.count, *why);
            continue;
          }
#endif
        } else if (name == "nccl") {
#if CCLAB_HAVE_NCCL
          if (auto why = NcclTransport::native_unsupported(spec)) {
            print0("{:>12} {:>12}  n/a: {}\n", bytes, spec.count, *why);
            continue;
          }
#endif
        } else if (name != "mpi") {
          PlannedCompact planned = plan_compact(spec, *topology_, name, options_);
          if (!planned.schedule) {
            print0("{:>12} {:>12}  n/a: {}\n", bytes, spec.count, planned.reason);
            continue;
          }
          verified = verify_compact(std::move(*planned.schedule));
          schedule = own_row(verified->compact(), world_.rank());
        }
        // A collective without an in-place form (alltoall, sendrecv) prints n/a there.
        const bool has_in_place = has_in_place_form(collective_);
        const Measured out = measure(spec, name, schedule, false),
                       in = has_in_place ? measure(spec, name, schedule, true) : Measured{};
        auto bandwidths = [&](double us) {
          return nccl_tests_bandwidths(collective_, world_.size(), static_cast<double>(spec.bytes()),
                                       us * 1e-6);
        };
        auto algbw = [&](double us) { return bandwidths(us).algbw_GBps; };
        Result r{bandwidths(out.time_us).busbw_GBps, bandwidths(in.time_us).busbw_GBps, std::nullopt};
        if (verified && predict_topology_ && world_.rank() == 0)
          r.predicted_us = predict_us(verified->compact());
        const std::string in_place_columns =
            has_in_place ? fmt::format("{:>10.2f} {:>7.2f} {:>7.2f} {:>6}", in.time_us, algbw(in.time_us),
                                       r.busbw_in, in.wrong)
                         : fmt::format("{:>10} {:>7} {:>7} {:>6}", "n/a", "n/a", "n/a", "n/a");
        print0("{:>12} {:>12} {:>8} {:>6} {:>6} {:>10.2f} {:>7.2f} {:>7.2f} {:>6} {}", spec.count * elem,
               spec.count, nccl_type_name(dtype_), redop_column(collective_, op_), rooted() ? args_.root : -1,
               out.time_us, algbw(out.time_us), r.busbw_out, out.wrong, in_place_columns);
        if (r.predicted_us) {
          print0(" {:>10.2f} {:>+7.1f}%", *r.predicted_us,
                 100 * (*r.predicted_us - out.time_us) / out.time_us);
        }
        print0("\n");
        busbw_sum += r.busbw_out;
        wrong += out.wrong + in.wrong;
        // The row as the table above prints it (its redop too, as cclab sim writes it).
        log.rows.push_back(NcclTestsRow{spec.count * elem, spec.count, nccl_type_name(dtype_),
                                        std::string(redop_column(collective_, op_)), out.time_us,
                                        algbw(out.time_us), r.busbw_out,
                                        has_in_place ? std::optional<double>(in.time_us) : std::nullopt,
                                        out.iterations, rooted() ? args_.root : -1});
        results[name][bytes] = r;
      }
      print0("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
      print0("# Avg bus bandwidth    : {:.4f}\n", sizes.empty() ? 0.0 : busbw_sum / sizes.size());
      wrong_total += wrong;
    }
    summary(sizes, results);
    if (world_.rank() == 0 && !args_.json.empty()) {
      // What produced the file, in nccl-tests' "args" (after the program name).
      const std::vector<std::string> argv = {"cclab-bench",
                                             "--collective",
                                             args_.collective,
                                             "--algo",
                                             names_.front(),
                                             "-b",
                                             args_.min_bytes,
                                             "-e",
                                             args_.max_bytes,
                                             "-f",
                                             std::to_string(args_.factor),
                                             "-n",
                                             std::to_string(args_.iters),
                                             "--transport",
                                             args_.transport};
      write_output_file(args_.json, format_nccl_tests_json(log, argv), "nccl-tests JSON");
      print0("# nccl-tests JSON written to {} (cclab compare reads it)\n", args_.json);
    }
    if (world_.rank() == 0 && !args_.csv.empty()) {
      write_output_file(args_.csv, format_nccl_tests_csv(log), "CSV");
      print0("# CSV written to {}\n", args_.csv);
    }
    return wrong_total == 0 ? 0 : 1;
  }

 private:
  template <typename... Args>
  void print0(fmt::format_string<Args...> format, Args&&... args) {
    if (world_.rank() == 0) fmt::print(format, std::forward<Args>(args)...);
  }

  bool is_native(const std::string& name) const {
    return std::find(natives_.begin(), natives_.end(), name) != natives_.end();
  }

  bool rooted() const {
    return is_rooted(collective_);
  }

  void header() {
    print0("# cclab bench: {}, {} ranks on {} node(s), transport {}, topology {}\n", to_string(collective_),
           world_.size(), world_.nodes(), args_.transport, topology_spec_);
    print0(
        "# nThread 1 nGpus 1 minBytes {} maxBytes {} step: {}(factor) warmup iters: {} iters: {} agg iters: "
        "1 "
        "validation: {} graph: 0\n#\n# Using devices\n",
        parse_size_bytes(args_.min_bytes), parse_size_bytes(args_.max_bytes), args_.factor, args_.warmup,
        args_.iters, args_.check);
    // Every rank's line, in rank order, through rank 0.
    int device = -1;
#if CCLAB_HAVE_NCCL
    if (nccl_) device = nccl_->device();
#endif
    const std::string line =
        fmt::format("#  Rank {:>2} Group  0 Pid {:>6} on {:>10} device {:>2} [{}]\n", world_.rank(),
                    ::getpid(), world_.host(), device, device >= 0 ? "gpu" : "cpu");
    std::vector<char> all(static_cast<std::size_t>(world_.size()) * 128, '\0');
    std::vector<char> mine(128, '\0');
    std::copy_n(line.begin(), std::min<std::size_t>(line.size(), 127), mine.begin());
    MPI_Gather(mine.data(), 128, MPI_CHAR, all.data(), 128, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int r = 0; r < world_.size(); ++r)
      print0("{}", std::string(all.data() + r * 128));
  }

  void table_header() {
    std::string extra_title, extra_cols, extra_units;
    if (predict_topology_) {
      extra_cols = fmt::format(" {:>10} {:>8}", "predicted", "error");
      extra_units = fmt::format(" {:>10} {:>8}", "(us)", "");
    }
    print0("#{:>73}{:>39}\n", "out-of-place", "in-place");
    print0("#{:>11} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6} {:>10} {:>7} {:>7} {:>6}{}\n", "size",
           "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
           "#wrong", extra_cols);
    print0("#{:>11} {:>12} {:>8} {:>6} {:>6} {:>10} {:>7} {:>7} {:>6} {:>10} {:>7} {:>7} {:>6}{}\n", "(B)",
           "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
           extra_units);
  }

  // Buffers live where the engine's transport keeps them (host for mpi, the GPU for nccl); inputs are filled
  // and results checked on the host, outside the timed runs.
  Measured measure(const CollectiveSpec& spec, const std::string& name,
                   const std::optional<Schedule>& schedule, bool in_place) {
    const int rank = world_.rank();
    const std::size_t elem = dtype_size_bytes(spec.dtype);
    const std::uint64_t out_elems =
        in_place ? std::max(input_count(spec, rank), output_count(spec, rank)) : output_count(spec, rank);
    const std::size_t in_bytes = input_count(spec, rank) * elem, out_bytes = out_elems * elem;
    Transport& t = *engine_;
    const std::unique_ptr<void, std::function<void(void*)>> input(t.allocate(in_bytes),
                                                                  [&t](void*p) { t.deallocate(p); }),
        output(t.allocate(out_bytes), [&t](void*p) { t.deallocate(p); });
    auto once = [&] {
      if (schedule) {
        run_rank(*schedule, t, input.get(), output.get(), {in_place, args_.timeout_s}, &workspace_);
      } else if (name == "mpi") {
        mpi_native_collective(spec, transport_.comm(), input.get(), output.get(), in_place);
      } else if (name == "gloo") {
#if CCLAB_HAVE_GLOO
        gloo_->run(spec, input.get(), output.get(), in_place);
#endif
      } else if (name == "nccl") {
#if CCLAB_HAVE_NCCL
        nccl_->native_collective(spec, input.get(), output.get(), in_place, args_.timeout_s);
#endif
      }
    };
    Measured m;
    if (args_.check) {
      std::vector<std::byte> host_in(in_bytes), host_out(out_bytes);
      fill_input(spec, rank, host_in.data(), host_out.data(), in_place);
      t.upload(input.get(), host_in.data(), in_bytes);
      t.upload(output.get(), host_out.data(), out_bytes);
      once();
      t.download(host_out.data(), output.get(), out_bytes);
      m.wrong = count_wrong(spec, rank, host_out.data(), in_place);
      MPI_Allreduce(MPI_IN_PLACE, &m.wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    }
    for (int i = 0; i < args_.warmup; ++i)
      once();
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<double> run_us(static_cast<std::size_t>(args_.iters));
    const double start = MPI_Wtime();
    for (double& us : run_us) {
      const double t0 = MPI_Wtime();
      once();
      us = (MPI_Wtime() - t0) * 1e6;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = (MPI_Wtime() - start) / std::max(1, args_.iters);
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    m.time_us = seconds / world_.size() * 1e6;
    MPI_Allreduce(MPI_IN_PLACE, run_us.data(), args_.iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    m.iterations = percentiles(run_us);
    return m;
  }

  // The same schedule's time on the --predict topology. Ranks on CPUs: the α-β model with one core per rank
  // and the measured reduction rate (as `train --validate`); on GPUs the injected simulator, else the α-β
  // model.
  double predict_us(const CompactSchedule& schedule) {
    if (cpu_reduce_Bps_)
      return estimate_compact_cost(schedule, *predict_topology_, cpu_rank_costs(*cpu_reduce_Bps_)).total_s *
             1e6;
    if (args_.simulate) {
      CostParams raw;
      raw.protocol = Protocol::Raw;
      return args_.simulate(schedule, *predict_topology_, raw).seconds * 1e6;
    }
    return estimate_compact_cost(schedule, *predict_topology_).total_s * 1e6;
  }

  // Per size: every column's busbw, then the best engine algorithm over each native collective measured.
  void summary(const std::vector<std::uint64_t>& sizes,
               const std::map<std::string, std::map<std::uint64_t, Result>>& results) {
    std::vector<std::string> natives;
    for (const std::string& name : names_)
      if (is_native(name)) natives.push_back(name);
    if (natives.empty() || results.size() <= natives.size()) return;
    print0("#\n# Summary: out-of-place busbw (GB/s) per size; engine/X = best engine algorithm / native X\n");
    print0("#{:>11}", "size");
    for (const std::string& name : names_)
      print0(" {:>16}", name);
    for (const std::string& native : natives)
      print0(" {:>12}", "engine/" + native);
    print0("\n");
    auto busbw = [&](const std::string& name, std::uint64_t bytes) -> std::optional<double> {
      const auto column = results.find(name);
      if (column == results.end()) return std::nullopt;
      const auto it = column->second.find(bytes);
      if (it == column->second.end()) return std::nullopt;
      return it->second.busbw_out;
    };
    for (const std::uint64_t bytes : sizes) {
      print0(" {:>11}", bytes);
      double best = 0;
      for (const std::string& name : names_) {
        const auto value = busbw(name, bytes);
        if (value) {
          print0(" {:>16.3f}", *value);
        } else {
          print0(" {:>16}", "n/a");
        }
        if (value && !is_native(name)) best = std::max(best, *value);
      }
      for (const std::string& native : natives) {
        const auto value = busbw(native, bytes);
        if (value && *value > 0) {
          print0(" {:>11.2f}x", best / *value);
        } else {
          print0(" {:>12}", "n/a");
        }
      }
      print0("\n");
    }
  }

  BenchOptions args_;
  MpiWorld& world_;
  MpiTransport transport_;
  std::unique_ptr<Transport> engine_owned_;
  Transport* engine_ = &transport_;  // runs the engine's schedules
#if CCLAB_HAVE_NCCL
  NcclTransport* nccl_ = nullptr;  // the engine's transport, when it is NCCL (for the native column)
#endif
  std::vector<std::string> natives_;
  Workspace workspace_;
  Collective collective_ = Collective::AllReduce;
  DType dtype_ = DType::F32;
  ReduceOp op_ = ReduceOp::Sum;
  std::string topology_spec_;
  std::shared_ptr<const topo::Topology> topology_;
  std::shared_ptr<const topo::Topology> predict_topology_;
  std::optional<double> cpu_reduce_Bps_;  // --predict on CPU ranks: the measured reduction rate
  PlanOptions options_;
  std::vector<std::string> names_;
  std::vector<std::string> skipped_;  // --algo all: "name (why it does not apply)"
#if CCLAB_HAVE_GLOO
  std::unique_ptr<GlooCollectives> gloo_;
#endif
};

}  // namespace

int run_bench(const BenchOptions& options, MpiWorld& world) {
  return Bench(options, world).run();
}

}  // namespace cclab::real
