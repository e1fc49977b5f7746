#include "engine/whatif/predict.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#include "engine/check/verified.hpp"
#include "engine/ir/trace.hpp"
#include "engine/plan/ring_search.hpp"
#include "engine/plan/selection.hpp"

namespace cclab {
namespace {

// The time of each bucket's collective: the Selector plans, checks and α-β-costs each distinct (topology,
// spec, options, algorithm) once; a sweep meets the same bucket sizes over and over. Simulated times are
// cached per schedule.
// The schedules planned across a sweep's threads, so that the statistics count each distinct one once,
// whichever thread planned it and however many did.
class PlannedSchedules {
 public:
  using Key = std::tuple<int, double, const topo::Topology*, int, std::uint64_t, int, int, int, int,
                         std::string, std::uint64_t, std::optional<int>, std::optional<std::string>>;
  // True the first time a schedule with this identity is seen.
  bool first(Key key) {
    const std::lock_guard<std::mutex> lock(mutex_);
    return keys_.insert(std::move(key)).second;
  }

 private:
  std::mutex mutex_;
  std::set<Key> keys_;
};

class CollectiveTimes {
 public:
  CollectiveTimes(const PredictOptions& options, PredictStats& stats, PlannedSchedules& planned)
      : options_(options), stats_(stats), planned_(planned) {}

  const Candidate& time(const ScenarioPoint& p, const CollectiveSpec& bucket, double& seconds) {
    const CollectiveSpec spec = spec_for(*p.topology, bucket.collective, bucket.count, bucket.dtype);
    planning_on_ = p.topology.get();
    const Candidate& c = selector_for(p.cost).choose(spec, *p.topology, p.algorithm, p.plan);
    if (!c.support.ok) {
      throw ConfigError(is_selection(bucket.collective, p.algorithm)
                            ? fmt::format("on {} GPUs: {}", p.gpus(), c.support.reason)
                            : fmt::format("{} {} does not apply on {} GPUs: {}", p.algorithm,
                                          to_string(bucket.collective), p.gpus(), c.support.reason));
    }
    seconds = c.time_s;
    if (p.backend == TimeBackend::Sim) {
      if (!options_.simulate)
        throw ConfigError("backend: sim needs cclab built with SimGrid (libsimgrid-dev)");
      // The simulator prices messages with the protocol the α-β selection chose, and reduces at the point's
      // rates (the selector, and so the schedule, is the point's cost parameters').
      CostParams cost = p.cost;
      cost.protocol = c.protocol;
      const std::pair key{c.schedule.get(), static_cast<int>(c.protocol)};
      if (collecting_) {
        if (!simulated_.contains(key) && wanted_keys_.insert(key).second)
          wanted_.push_back({c.schedule.get(), p.topology.get(), cost});
        return c;  // the α-β time stands in until the simulations have run
      }
      auto [it, fresh] = simulated_.try_emplace(key, 0.0);
      if (fresh) it->second = count(options_.simulate(*c.schedule, *p.topology, cost));
      seconds = it->second;
    }
    return c;
  }

  // While collecting, time() notes each simulation a point asks for instead of running it.
  void collect(bool on) { collecting_ = on; }
  // Runs the noted simulations side by side. One that failed is left out: the point that asks for it runs
  // it alone, and fails with its reason.
  void simulate_collected(const ScheduleBatchTimer& batch, int parallel, bool progress) {
    if (wanted_.empty()) return;
    std::size_t done = 0;
    const std::vector<ScheduleTime> times = batch(wanted_, parallel, [&](std::size_t) {
      if (progress)
        fmt::print(stderr, "\r[{}/{}] collectives simulated, {} at once            ", ++done, wanted_.size(),
                   parallel);
    });
    for (std::size_t i = 0; i < wanted_.size(); ++i) {
      if (std::isnan(times[i].seconds)) continue;
      simulated_.emplace(std::pair{wanted_[i].schedule, static_cast<int>(wanted_[i].cost.protocol)},
                         count(times[i]));
    }
    wanted_.clear();
    wanted_keys_.clear();
  }

  // The collective times of one point, as the step model asks for them.
  CollectiveTimer timer_for(const ScenarioPoint& p) {
    return [this, &p](const CollectiveSpec& bucket, std::string& used) {
      double seconds = 0;
      used = time(p, bucket, seconds).algorithm;
      return seconds;
    };
  }

 private:
  // One selector per cost parameters (protocol, reduction rate): its cache is keyed by spec and plan only.
  Selector& selector_for(const CostParams& cost) {
    const auto key = std::pair{static_cast<int>(cost.protocol), cost.reduce_Bps};
    auto it = selectors_.find(key);
    if (it == selectors_.end()) {
      it = selectors_
               .emplace(std::piecewise_construct, std::forward_as_tuple(key),
                        std::forward_as_tuple(cost, [this, key](const CompactSchedule& s) { check(s, key); }))
               .first;
    }
    return it->second;
  }

  // A distinct simulation, counted by the way it ran.
  double count(const ScheduleTime& time) {
    ++stats_.simulated;
    if (time.by_pattern) ++stats_.simulated_by_pattern;
    return time.seconds;
  }

  // Every schedule passes the compact checks (O(C·P) for ring and tree passes) before it is costed; small
  // ones are also expanded and fully verified.
  void check(const CompactSchedule& s, std::pair<int, double> cost) {
    const bool first = planned_.first(
        {cost.first, cost.second, planning_on_, static_cast<int>(s.spec.collective), s.spec.count,
         static_cast<int>(s.spec.dtype), static_cast<int>(s.spec.op), s.spec.root, s.spec.world_size,
         s.algorithm, s.params.chunk_bytes, s.params.channels, s.params.inter});
    if (first) ++stats_.schedules;
    if (!options_.verify.check) return;
    const bool full = count_explicit_ops(s) <= options_.verify.full_up_to_ops;
    (void)verify_compact(s, full ? VerifyDepth::All : VerifyDepth::Patterns);
    if (!first) return;
    ++stats_.checked;
    if (full) ++stats_.verified;
  }

  const PredictOptions& options_;
  PredictStats& stats_;
  PlannedSchedules& planned_;
  const topo::Topology* planning_on_ = nullptr;  // the topology of the choose() in progress
  std::map<std::pair<int, double>, Selector> selectors_;
  std::map<std::pair<const CompactSchedule*, int>, double> simulated_;  // the selector owns the schedules
  bool collecting_ = false;
  std::vector<TimedSchedule> wanted_;  // noted while collecting, in the order the points asked
  std::set<std::pair<const CompactSchedule*, int>> wanted_keys_;
};

std::string summarize_algorithms(const StepPrediction& p) {
  std::map<std::string, int> counts;
  for (const Bucket& b : p.buckets) {
    if (!b.algorithm.empty()) ++counts[b.algorithm];
    if (!b.gather_algorithm.empty()) ++counts[b.gather_algorithm];
  }
  std::string out;
  for (const auto& [name, n] : counts)
    out += fmt::format("{}{}x{}", out.empty() ? "" : ",", name, n);
  return out;
}

// Swept fields other than the two every table has (GPUs and algorithm) get a column of their own.
std::vector<std::string> extra_columns(const Scenario& s) {
  std::vector<std::string> cols;
  for (const std::string& f : s.swept_fields)
    if (f != "nodes" && f != "algorithm") cols.push_back(f);
  return cols;
}

std::string swept_value(const ScenarioPoint& p, const std::string& field) {
  for (const auto& [f, v] : p.swept)
    if (f == field) return v;
  return "";
}

// What the scenario left to the topology: the machine balance (the topology's GPU's), the compute
// slowdown while a collective runs (the collective's channels — thread blocks, one SM each — over the GPU's
// SMs), and the variation of compute between GPUs (kGpuVariation).
ComputeProfile resolved_compute(const ScenarioPoint& p) {
  ComputeProfile c = p.compute;
  if (c.jitter < 0) c.jitter = kGpuVariation;
  if (c.flops_per_byte <= 0 && p.topology->gpu_arch())
    c.flops_per_byte = gpu_flops_per_byte(topo::to_string(*p.topology->gpu_arch()));
  if (c.overlap_slowdown < 0 && c.sms > 0) {
    const int channels = p.plan.channels > 0 ? p.plan.channels : planners::default_ring_channels(*p.topology);
    c.overlap_slowdown = std::min(0.5, static_cast<double>(channels) / c.sms);
  }
  return c;
}

}  // namespace

namespace {

// What predicting a set of points leaves: per point of the scenario, its result or its error (neither for a
// point not asked for).
struct Outcomes {
  std::vector<std::optional<PointResult>> results;
  std::vector<std::exception_ptr> errors;
};

Outcomes predict_points(const Scenario& scenario, const PredictOptions& options, Shard shard,
                        PredictStats* stats) {
  const std::size_t n = scenario.points.size();
  std::vector<std::optional<PointResult>> results(n);
  std::vector<std::exception_ptr> errors(n);
  std::mutex progress_mutex;
  std::size_t done = 0;
  // One point, with its own worker's selectors and caches.
  auto point_result = [&](std::size_t i, CollectiveTimes& times) {
    const ScenarioPoint& p = scenario.points[i];
    // The step on `world` (this point, or its survivors after a loss): same workload, its own collectives.
    auto step_on = [&](const ScenarioPoint& world) {
      return predict_step(*p.workload, resolved_compute(world), p.fusion, world.gpus(),
                          times.timer_for(world), p.sync, p.stragglers.active() ? p.stragglers.factor : 1.0);
    };
    PointResult r{&p, step_on(p), "", std::nullopt};
    r.bucket_algorithms = summarize_algorithms(r.prediction);
    if (p.lost.active()) {
      // The survivors' world: the same point on the smaller topology, its collectives planned anew.
      ScenarioPoint after = p;
      after.topology = p.shrunk_topology;
      const StepPrediction shrunk = step_on(after);
      r.elastic = elastic_outcome(p.lost, p.gpus(), after.gpus(), p.compute.batch_per_gpu,
                                  r.prediction.step_s, shrunk.step_s);
    }
    return r;
  };
  auto predict_point = [&](std::size_t i, CollectiveTimes& times) {
    const ScenarioPoint& p = scenario.points[i];
    try {
      results[i] = point_result(i, times);
    } catch (...) {
      errors[i] = std::current_exception();
    }
    if (options.progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      fmt::print(stderr, "\r[{}/{}] {} GPUs, {}{}{}            ", ++done, n, p.gpus(), p.algorithm,
                 p.swept.empty() ? "" : ": ", p.label());
    }
  };
  std::vector<std::size_t> modelled, simulated;
  for (std::size_t i = 0; i < n; ++i)
    if (shard.owns(i)) (scenario.points[i].backend == TimeBackend::Sim ? simulated : modelled).push_back(i);
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers =
      std::min(modelled.size(), options.jobs > 0 ? static_cast<std::size_t>(options.jobs) : cores);
  std::vector<PredictStats> worker_stats(std::max<std::size_t>(workers, 1) + 1);
  PlannedSchedules planned;
  if (workers > 1) {
    std::atomic<std::size_t> next{0};
    std::vector<std::jthread> threads;
    for (std::size_t w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        CollectiveTimes times(options, worker_stats[w], planned);
        for (std::size_t k = next++; k < modelled.size(); k = next++)
          predict_point(modelled[k], times);
      });
    }
  } else {
    simulated.insert(simulated.end(), modelled.begin(), modelled.end());
    std::sort(simulated.begin(), simulated.end());
  }
  {
    CollectiveTimes times(options, worker_stats.back(), planned);
    const std::size_t sim_points =
        static_cast<std::size_t>(std::count_if(simulated.begin(), simulated.end(), [&](std::size_t i) {
          return scenario.points[i].backend == TimeBackend::Sim;
        }));
    const int processes = options.jobs > 0 ? options.jobs : static_cast<int>(cores);
    if (options.simulate_batch && options.simulate && sim_points > 0 && processes > 1) {
      // A dry run of the sim points (α-β times standing in) finds the collectives they simulate; those run
      // side by side, and the points then take their times from the cache. A point that asks for one more
      // (its buckets depend on the times) simulates it on its own: the results are a serial run's.
      times.collect(true);
      for (std::size_t i : simulated) {
        if (scenario.points[i].backend != TimeBackend::Sim) continue;
        try {
          (void)point_result(i, times);
        } catch (...) {  // the point's own run below reports it
        }
      }
      times.collect(false);
      times.simulate_collected(options.simulate_batch, processes, options.progress);
    }
    for (std::size_t i : simulated)
      predict_point(i, times);
  }
  if (options.progress) fmt::print(stderr, "\r{:80}\r", "");
  if (stats) {
    for (const PredictStats& w : worker_stats) {
      stats->schedules += w.schedules;
      stats->checked += w.checked;
      stats->verified += w.verified;
      stats->simulated += w.simulated;
      stats->simulated_by_pattern += w.simulated_by_pattern;
    }
  }
  return {std::move(results), std::move(errors)};
}

// The first failing point's error, as a run in order would have stopped there; else the results.
std::vector<PointResult> in_order(Outcomes outcomes) {
  for (const std::exception_ptr& e : outcomes.errors)
    if (e) std::rethrow_exception(e);
  std::vector<PointResult> out;
  out.reserve(outcomes.results.size());
  for (auto& r : outcomes.results)
    out.push_back(std::move(*r));
  return out;
}

// ---- the wire form of a shard's outcomes (predict_shard / merge_shards) ----

nlohmann::json bucket_json(const Bucket& b) {
  return {b.elements, b.first_tensor, b.last_tensor,    b.ready_s,      b.start_s,
          b.end_s,    b.algorithm,    b.gather_start_s, b.gather_end_s, b.gather_algorithm};
}
Bucket bucket_from(const nlohmann::json& j) {
  return Bucket{j[0].get<std::uint64_t>(), j[1].get<std::size_t>(), j[2].get<std::size_t>(),
                j[3].get<double>(),        j[4].get<double>(),      j[5].get<double>(),
                j[6].get<std::string>(),   j[7].get<double>(),      j[8].get<double>(),
                j[9].get<std::string>()};
}
nlohmann::json spans_json(const ComputeSpans& c) {
  return {c.forward_end_s, c.backward_end_s, c.optimizer_start_s, c.optimizer_end_s};
}
ComputeSpans spans_from(const nlohmann::json& j) {
  return {j[0].get<double>(), j[1].get<double>(), j[2].get<double>(), j[3].get<double>()};
}
nlohmann::json elastic_json(const ElasticOutcome& e) {
  return {e.gpus_after,    e.redone_steps, e.lost_work_s,          e.recovery_s,
          e.step_before_s, e.step_after_s, e.samples_per_s_before, e.samples_per_s_after,
          e.steps_after,   e.checkpoints,  e.checkpoint_s,         e.job_s,
          e.healthy_job_s};
}
ElasticOutcome elastic_from(const nlohmann::json& j) {
  ElasticOutcome e;
  e.gpus_after = j[0], e.redone_steps = j[1], e.lost_work_s = j[2], e.recovery_s = j[3];
  e.step_before_s = j[4], e.step_after_s = j[5], e.samples_per_s_before = j[6], e.samples_per_s_after = j[7];
  e.steps_after = j[8], e.checkpoints = j[9], e.checkpoint_s = j[10], e.job_s = j[11],
  e.healthy_job_s = j[12];
  return e;
}

// An error crosses as its type and message.
nlohmann::json error_json(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const ConfigError& e) {
    return {"config", e.what()};
  } catch (const PlanError& e) {
    return {"plan", e.what()};
  } catch (const BackendError& e) {
    return {"backend", e.what()};
  } catch (const std::exception& e) {
    return {"internal", e.what()};
  }
}
[[noreturn]] void throw_error(const nlohmann::json& j) {
  const std::string kind = j[0], message = j[1];
  if (kind == "config") throw ConfigError(message);
  if (kind == "plan") throw PlanError(message);
  if (kind == "backend") throw BackendError(message);
  throw InternalError(message);
}

}  // namespace

std::vector<PointResult> predict_scenario(const Scenario& scenario, const PredictOptions& options,
                                          PredictStats* stats) {
  return in_order(predict_points(scenario, options, Shard{}, stats));
}

std::string predict_shard(const Scenario& scenario, const PredictOptions& options, Shard shard,
                          PredictStats* stats) {
  Outcomes outcomes = predict_points(scenario, options, shard, stats);
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t i = 0; i < outcomes.results.size(); ++i) {
    if (outcomes.errors[i]) {
      points.push_back({i, "error", error_json(outcomes.errors[i])});
    } else if (const auto& r = outcomes.results[i]) {
      const StepPrediction& p = r->prediction;
      nlohmann::json buckets = nlohmann::json::array();
      for (const Bucket& b : p.buckets)
        buckets.push_back(bucket_json(b));
      points.push_back({i,
                        "ok",
                        {buckets, spans_json(p.slowest), spans_json(p.healthy), p.step_s, p.compute_s,
                         p.communication_s, p.exposed_s, p.samples_per_s, p.speedup, p.efficiency},
                        r->bucket_algorithms,
                        r->elastic ? elastic_json(*r->elastic) : nlohmann::json()});
    }
  }
  const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(points);
  return {cbor.begin(), cbor.end()};
}

std::vector<PointResult> merge_shards(const Scenario& scenario, const std::vector<std::string>& encoded) {
  Outcomes outcomes;
  outcomes.results.resize(scenario.points.size());
  outcomes.errors.resize(scenario.points.size());
  for (const std::string& shard : encoded) {
    for (const nlohmann::json& point : nlohmann::json::from_cbor(shard)) {
      const auto i = point[0].get<std::size_t>();
      CCLAB_ENFORCE(i < scenario.points.size(), "a shard returned point {} of {}", i, scenario.points.size());
      if (point[1] == "error") {
        try {
          throw_error(point[2]);
        } catch (...) {
          outcomes.errors[i] = std::current_exception();
        }
        continue;
      }
      const nlohmann::json& q = point[2];
      StepPrediction p;
      for (const nlohmann::json& b : q[0])
        p.buckets.push_back(bucket_from(b));
      p.slowest = spans_from(q[1]), p.healthy = spans_from(q[2]);
      p.step_s = q[3], p.compute_s = q[4], p.communication_s = q[5], p.exposed_s = q[6];
      p.samples_per_s = q[7], p.speedup = q[8], p.efficiency = q[9];
      std::optional<ElasticOutcome> elastic;
      if (!point[4].is_null()) elastic = elastic_from(point[4]);
      outcomes.results[i] = PointResult{&scenario.points[i], std::move(p), point[3], std::move(elastic)};
    }
  }
  for (std::size_t i = 0; i < scenario.points.size(); ++i)
    CCLAB_ENFORCE(outcomes.results[i] || outcomes.errors[i], "no shard predicted point {}", i);
  return in_order(std::move(outcomes));
}

std::string results_csv(const Scenario& scenario, const std::vector<PointResult>& results) {
  std::ostringstream csv;
  csv << "scenario,gpus,algorithm";
  for (const std::string& c : extra_columns(scenario))
    csv << "," << c;
  csv << ",step_ms,comm_ms,exposed_ms,samples_per_s,speedup,efficiency,buckets";
  const bool elastic =
      std::any_of(results.begin(), results.end(), [](const PointResult& r) { return r.elastic; });
  if (elastic)
    csv << ",gpus_after,redone_steps,lost_work_s,recovery_s,samples_per_s_after,steps_after,checkpoints,"
           "checkpoint_s,job_s,healthy_job_s";
  csv << "\n";
  for (const PointResult& r : results) {
    const StepPrediction& p = r.prediction;
    csv << fmt::format("{},{},{}", scenario.name, r.point->gpus(), r.point->algorithm);
    for (const std::string& c : extra_columns(scenario))
      csv << "," << swept_value(*r.point, c);
    csv << fmt::format(",{:.3f},{:.3f},{:.3f},{:.1f},{:.2f},{:.4f},{}", p.step_s * 1e3,
                       p.communication_s * 1e3, p.exposed_s * 1e3, p.samples_per_s, p.speedup, p.efficiency,
                       r.bucket_algorithms);
    if (r.elastic) {
      const ElasticOutcome& e = *r.elastic;
      csv << fmt::format(",{},{},{:.3f},{:.3f},{:.1f},{},{},{:.3f},{:.3f},{:.3f}", e.gpus_after,
                         e.redone_steps, e.lost_work_s, e.recovery_s, e.samples_per_s_after, e.steps_after,
                         e.checkpoints, e.checkpoint_s, e.job_s, e.healthy_job_s);
    } else if (elastic) {
      csv << ",,,,,,,,,,";
    }
    csv << "\n";
  }
  return csv.str();
}

nlohmann::json results_json(const Scenario& scenario, const std::vector<PointResult>& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PointResult& r : results) {
    const StepPrediction& p = r.prediction;
    nlohmann::json swept = nlohmann::json::object();
    for (const auto& [field, value] : r.point->swept)
      swept[field] = value;
    rows.push_back({{"scenario", scenario.name},
                    {"point", r.point->label()},
                    {"swept", swept},
                    {"gpus", r.point->gpus()},
                    {"algorithm", r.point->algorithm},
                    {"step_s", p.step_s},
                    {"communication_s", p.communication_s},
                    {"exposed_s", p.exposed_s},
                    {"samples_per_s", p.samples_per_s},
                    {"speedup", p.speedup},
                    {"efficiency", p.efficiency},
                    {"bucket_algorithms", r.bucket_algorithms},
                    {"buckets", p.buckets.size()}});
    if (r.elastic) {
      const ElasticOutcome& e = *r.elastic;
      rows.back()["lost_nodes"] = {{"gpus_after", e.gpus_after},
                                   {"redone_steps", e.redone_steps},
                                   {"lost_work_s", e.lost_work_s},
                                   {"recovery_s", e.recovery_s},
                                   {"samples_per_s_after", e.samples_per_s_after},
                                   {"steps_after", e.steps_after},
                                   {"checkpoints", e.checkpoints},
                                   {"checkpoint_s", e.checkpoint_s},
                                   {"job_s", e.job_s},
                                   {"healthy_job_s", e.healthy_job_s}};
    }
  }
  return rows;
}

void print_results_table(const Scenario& scenario, const std::vector<PointResult>& results) {
  if (results.empty()) return;
  const ScenarioPoint& first = *results.front().point;
  fmt::print("# {}: {}\n", scenario.name,
             scenario.description.empty() ? scenario.source : scenario.description);
  fmt::print(
      "# {} ({}: {:.1f} ms forward+backward per {}-sample batch, {:.1f} % variation between GPUs), {} "
      "on {} buckets, times from {}\n",
      first.workload->name, first.compute_source, (first.compute.forward_s + first.compute.backward_s) * 1e3,
      first.compute.batch_per_gpu, 100 * resolved_compute(first).jitter,
      first.sync == GradientSync::ZeroSharded ? "reduce-scatter + allgather" : "allreduce",
      results.front().prediction.buckets.size(),
      first.backend == TimeBackend::Sim ? "SimGrid" : "the α-β model");
  const auto extra = extra_columns(scenario);
  fmt::print("{:>6} {:<13}", "GPUs", "algorithm");
  for (const std::string& c : extra)
    fmt::print(" {:<10}", c);
  fmt::print(" {:>9} {:>9} {:>11} {:>11} {:>8} {:>10}  {}\n", "step(ms)", "comm(ms)", "exposed(ms)",
             "samples/s", "speedup", "efficiency", "buckets");
  for (const PointResult& r : results) {
    const StepPrediction& p = r.prediction;
    fmt::print("{:>6} {:<13}", r.point->gpus(), r.point->algorithm);
    for (const std::string& c : extra)
      fmt::print(" {:<10}", swept_value(*r.point, c));
    fmt::print(" {:>9.2f} {:>9.2f} {:>11.2f} {:>11.0f} {:>8.1f} {:>9.1f}%  {}\n", p.step_s * 1e3,
               p.communication_s * 1e3, p.exposed_s * 1e3, p.samples_per_s, p.speedup, 100 * p.efficiency,
               r.bucket_algorithms);
    if (r.elastic) {
      const ElasticOutcome& e = *r.elastic;
      const LostNodes& l = r.point->lost;
      fmt::print(
          "       lost {} node(s) after step {}: {} steps since the last checkpoint redone ({:.1f} s), "
          "restart "
          "{:.0f} s, then {} steps on {} GPUs at {:.0f} samples/s ({:.1f}% of before); {} checkpoints "
          "written "
          "({:.0f} s); the {}-step job takes {:.0f} s instead of {:.0f} s ({:.3f}x)\n",
          l.nodes, l.at_step, e.redone_steps, e.lost_work_s, e.recovery_s, e.steps_after, e.gpus_after,
          e.samples_per_s_after, 100 * e.samples_per_s_after / e.samples_per_s_before, e.checkpoints,
          e.checkpoint_s, l.steps, e.job_s, e.healthy_job_s, e.job_s / e.healthy_job_s);
    }
  }
}

namespace {

std::string describe(const LinkSelection& s) {
  if (!s.kind.empty()) return fmt::format("every {} link", s.kind);
  if (!s.link.empty()) return fmt::format("link {}", s.link);
  return fmt::format("{:g}% of the inter-node links (seed {})", 100 * s.fraction, s.seed);
}

// The whole job of a lost-nodes point on one row: training up to the loss, the loss, the restart, the
// survivors redoing the steps since the checkpoint and finishing; checkpoint writes on a row of their own.
void add_elastic_job(const PointResult& result, int pid, std::vector<TraceSpan>& spans, TraceRows& rows) {
  const ScenarioPoint& point = *result.point;
  const LostNodes& l = point.lost;
  const ElasticOutcome& e = *result.elastic;
  const double step_before_s = e.step_before_s, step_after_s = e.step_after_s;
  const long every = std::max(1L, l.checkpoint_every);
  const double write_s = l.checkpoint_write_s;
  rows.processes[pid] = "job";
  rows.threads[{pid, 0}] = "training";
  rows.threads[{pid, 1}] = "checkpoints";
  const long before_checkpoints = l.at_step / every;
  const double loss_s = static_cast<double>(l.at_step) * step_before_s + before_checkpoints * write_s;
  spans.push_back({pid,
                   0,
                   fmt::format("steps 1-{} on {} GPUs", l.at_step, point.gpus()),
                   "training",
                   0,
                   loss_s,
                   {{"step_ms", fmt::format("{:.3f}", step_before_s * 1e3)}}});
  spans.push_back({pid, 0, fmt::format("{} node(s) lost", l.nodes), "fault", loss_s, loss_s, {}, true});
  const double resume_s = loss_s + e.recovery_s;
  spans.push_back({pid,
                   0,
                   "restart",
                   "fault",
                   loss_s,
                   resume_s,
                   {{"what", "detect the loss, re-form the world, re-plan the collectives, reload"}}});
  // The survivors first redo the samples of the steps since the checkpoint, at their own rate.
  const long kept = l.at_step - e.redone_steps;
  const double redo_s = e.redone_steps * static_cast<double>(point.gpus()) * point.compute.batch_per_gpu /
                        e.samples_per_s_after;
  if (e.redone_steps > 0) {
    spans.push_back(
        {pid,
         0,
         fmt::format("redo the samples of steps {}-{} on {} GPUs", kept + 1, l.at_step, e.gpus_after),
         "fault",
         resume_s,
         resume_s + redo_s,
         {{"lost_work_s", fmt::format("{:.3f}", e.lost_work_s)}}});
  }
  spans.push_back({pid,
                   0,
                   fmt::format("the rest of the job on {} GPUs", e.gpus_after),
                   "training",
                   resume_s + std::min(redo_s, e.job_s - resume_s),
                   e.job_s,
                   {{"step_ms", fmt::format("{:.3f}", step_after_s * 1e3)}}});
  // Each checkpoint write, up to a number a trace viewer handles comfortably (the count is in the table).
  constexpr long kMaxCheckpointSpans = 10'000;
  if (write_s <= 0 || e.checkpoints > kMaxCheckpointSpans) return;
  for (long i = 1; i <= before_checkpoints; ++i) {
    const double at = static_cast<double>(i * every) * step_before_s + (i - 1) * write_s;
    spans.push_back(
        {pid, 1, fmt::format("checkpoint at step {}", i * every), "checkpoint", at, at + write_s, {}});
  }
  for (long j = 1; j <= e.steps_after / every; ++j) {
    const double at = resume_s + static_cast<double>(j * every) * step_after_s + (j - 1) * write_s;
    spans.push_back({pid,
                     1,
                     fmt::format("checkpoint after {} steps on {} GPUs", j * every, e.gpus_after),
                     "checkpoint",
                     at,
                     at + write_s,
                     {}});
  }
}

}  // namespace

void write_step_timeline(const PointResult& result, const std::string& path) {
  const ScenarioPoint& point = *result.point;
  const StepPrediction& p = result.prediction;
  // Data parallelism is symmetric in this model: every rank has the same timeline, except that stragglers
  // (shown as the first ranks) compute slower and the others wait for their gradients. All ranks are written
  // (up to 1,024) so that the trace reads like a measured one. The compute spans are the step model's own.
  const int ranks = std::min(point.gpus(), 1024);
  const bool zero = point.sync == GradientSync::ZeroSharded;
  const DType dtype = point.fusion.fp16_compression ? DType::F16 : DType::F32;
  const double slow = point.stragglers.active() ? point.stragglers.factor : 1.0;
  std::vector<TraceSpan> spans;
  TraceRows rows;
  for (int r = 0; r < ranks; ++r) {
    const bool straggler = r < point.stragglers.gpus && slow != 1.0;
    const ComputeSpans& c = straggler ? p.slowest : p.healthy;
    rows.processes[r] =
        straggler ? fmt::format("rank {} (straggler, compute x{:g})", r, slow) : fmt::format("rank {}", r);
    rows.threads[{r, 0}] = "compute";
    rows.threads[{r, 1}] = "communication";
    spans.push_back({r, 0, "forward", "compute", 0, c.forward_end_s, {}});
    spans.push_back({r, 0, "backward", "compute", c.forward_end_s, c.backward_end_s, {}});
    // The buckets were timed at the slowest rank's pace: a healthy rank's gradients wait for the straggler's.
    if (c.backward_end_s < p.slowest.backward_end_s)
      spans.push_back({r,
                       0,
                       "wait for the stragglers' gradients",
                       "fault",
                       c.backward_end_s,
                       p.slowest.backward_end_s,
                       {}});
    if (c.optimizer_end_s > c.optimizer_start_s)
      spans.push_back({r, 0, "optimizer", "compute", c.optimizer_start_s, c.optimizer_end_s, {}});
    for (std::size_t i = 0; i < p.buckets.size(); ++i) {
      const Bucket& b = p.buckets[i];
      const std::string bytes = std::to_string(b.elements * dtype_size_bytes(dtype));
      spans.push_back({r,
                       1,
                       fmt::format("bucket {} {}", i, zero ? "reduce_scatter" : "allreduce"),
                       "communication",
                       b.start_s,
                       b.end_s,
                       {{"bytes", bytes},
                        {"algorithm", b.algorithm},
                        {"ready_ms", fmt::format("{:.3f}", b.ready_s * 1e3)}}});
      if (zero) {
        spans.push_back({r,
                         1,
                         fmt::format("bucket {} allgather", i),
                         "communication",
                         b.gather_start_s,
                         b.gather_end_s,
                         {{"bytes", bytes}, {"algorithm", b.gather_algorithm}}});
      }
    }
  }
  // Link faults last the whole step: one span each on a "faults" row.
  int next_pid = ranks;
  if (point.degrade.active() || point.fail.active()) {
    const int faults_pid = next_pid++;
    rows.processes[faults_pid] = "faults";
    rows.threads[{faults_pid, 0}] = "links";
    if (point.degrade.active()) {
      spans.push_back(
          {faults_pid,
           0,
           fmt::format("{} link(s) degraded: bandwidth x{:g}, latency +{}", point.degraded_links,
                       point.degrade.bandwidth_factor, format_time(point.degrade.extra_latency_s)),
           "fault",
           0,
           p.step_s,
           {{"links", describe(point.degrade.links)}}});
    }
    if (point.fail.active()) {
      spans.push_back({faults_pid,
                       0,
                       fmt::format("{} link(s) failed, traffic rerouted", point.failed_links),
                       "fault",
                       0,
                       p.step_s,
                       {{"links", describe(point.fail.links)}}});
    }
  }
  // A neighbour job (topology background flows) shares the fabric for the whole step: a row for its traffic,
  // and beside it the buckets that ran while it did, which is when it slows them (their spans on the ranks'
  // rows are that much longer than alone: compare with a point without it).
  const auto& background = point.topology->background();
  if (!background.empty()) {
    const int pid = next_pid++;
    int streams = 0;
    for (const topo::Topology::BackgroundFlow& f : background)
      streams += f.streams;
    rows.processes[pid] = "neighbour job";
    rows.threads[{pid, 0}] = "its traffic";
    rows.threads[{pid, 1}] = "our collectives beside it";
    spans.push_back({pid,
                     0,
                     fmt::format("{} flows, {} streams on the shared fabric", background.size(), streams),
                     "neighbour",
                     0,
                     p.step_s,
                     {{"flows", std::to_string(background.size())}, {"streams", std::to_string(streams)}}});
    for (std::size_t i = 0; i < p.buckets.size(); ++i) {
      const Bucket& b = p.buckets[i];
      spans.push_back(
          {pid, 1, fmt::format("bucket {} shares links with it", i), "neighbour", b.start_s, b.end_s, {}});
    }
  }
  if (result.elastic) add_elastic_job(result, next_pid, spans, rows);
  std::ofstream out(path);
  if (!out) throw ConfigError(fmt::format("{}: cannot write the timeline", path));
  write_chrome_trace_spans(spans, rows, out);
  if (!out) throw ConfigError(fmt::format("{}: write failed", path));
}

}  // namespace cclab
