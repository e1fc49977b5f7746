// `cclab regress SCENARIO... --baseline FILE`: the CI gate on scaling efficiency. Predicts each scenario and
// compares every point with the committed baseline: an efficiency drop or a step-time rise beyond the
// tolerance is a regression (exit 1); improvements are reported, not failures. Points without a baseline, or
// baseline points a scenario no longer produces, also fail: the baseline must be updated on purpose
// (--update), in the same change that moves it.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/distributed.hpp"
#include "cli/options.hpp"
#include "common/error.hpp"
#include "engine/whatif/predict.hpp"
#include "engine/whatif/scenario.hpp"

namespace cclab::cli {
namespace {

struct RegressArgs {
  std::vector<std::string> scenarios;
  std::string baseline;
  double tolerance = 0.01;
  bool update = false;
  std::string junit;
  int jobs = 0;        // threads for the α-β points; 0: one per core
  bool exact = false;  // sim points op by op instead of by pattern
};

struct Figures {
  int gpus = 0;
  double step_s = 0;
  double efficiency = 0;
};

// "scenario|point" -> figures.
using Points = std::map<std::string, Figures>;

std::string key_of(const std::string& scenario, const std::string& point) {
  return scenario + "|" + point;
}

Points read_baseline(const std::string& path) {
  Points points;
  std::ifstream in(path);
  if (!in) return points;  // no baseline yet: every point is new
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
    // Compared as JSON values, not cast: a float out of an integer's range would be undefined.
    if (!doc.is_object() || doc.value("cclab_baseline", nlohmann::json()) != 1)
      throw ConfigError("not a cclab baseline (version 1)");
    for (const auto& p : doc.at("points")) {
      const nlohmann::json& gpus = p.at("gpus");
      if (!gpus.is_number_integer() || gpus.get<std::int64_t>() < 1 || gpus.get<std::int64_t>() > (1 << 30))
        throw ConfigError(fmt::format("a point's gpus is not a GPU count: {}", gpus.dump()));
      points[key_of(p.at("scenario").get<std::string>(), p.at("point").get<std::string>())] =
          Figures{static_cast<int>(gpus.get<std::int64_t>()), p.at("step_s").get<double>(),
                  p.at("efficiency").get<double>()};
    }
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("{}: not a valid baseline: {}", path, e.what()));
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
  return points;
}

void write_baseline(const std::string& path, const Points& points) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, f] : points) {
    const auto bar = key.find('|');
    list.push_back({{"scenario", key.substr(0, bar)},
                    {"point", key.substr(bar + 1)},
                    {"gpus", f.gpus},
                    {"step_s", f.step_s},
                    {"efficiency", f.efficiency}});
  }
  // One point per line, so that a change to the baseline reads as a diff of the points that moved.
  std::string text =
      "{\"cclab_baseline\": 1,\n \"note\": \"written by `cclab regress --update`; commit it with "
      "the change that moves the predictions\",\n \"points\": [\n";
  for (std::size_t i = 0; i < list.size(); ++i)
    text += "  " + list[i].dump() + (i + 1 < list.size() ? ",\n" : "\n");
  text += " ]}\n";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) throw ConfigError(fmt::format("{}: cannot write the baseline", tmp));
  }
  std::filesystem::rename(tmp, path);  // atomic: a failed run never leaves half a baseline
}

struct Verdict {
  std::string scenario, point;
  enum Kind { Same, Improved, Regressed, New, Missing } kind = Same;
  std::string detail;
};

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void write_junit(const std::string& path, const std::vector<Verdict>& verdicts, double seconds) {
  int failures = 0;
  for (const Verdict& v : verdicts)
    failures += v.kind == Verdict::Regressed || v.kind == Verdict::New || v.kind == Verdict::Missing;
  std::ofstream out(path);
  if (!out) throw ConfigError(fmt::format("{}: cannot write the JUnit report", path));
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << fmt::format("<testsuites name=\"cclab regress\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     verdicts.size(), failures, seconds);
  std::map<std::string, std::vector<const Verdict*>> by_scenario;
  for (const Verdict& v : verdicts)
    by_scenario[v.scenario].push_back(&v);
  for (const auto& [scenario, list] : by_scenario) {
    int f = 0;
    for (const Verdict* v : list)
      f += v->kind == Verdict::Regressed || v->kind == Verdict::New || v->kind == Verdict::Missing;
    out << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n", xml_escape(scenario),
                       list.size(), f);
    for (const Verdict* v : list) {
      out << fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(scenario),
                         xml_escape(v->point.empty() ? "(single point)" : v->point));
      if (v->kind == Verdict::Regressed || v->kind == Verdict::New || v->kind == Verdict::Missing) {
        out << fmt::format(">\n      <failure message=\"{}\"/>\n    </testcase>\n", xml_escape(v->detail));
      } else if (!v->detail.empty()) {
        out << fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(v->detail));
      } else {
        out << "/>\n";
      }
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

int run_regress(const RegressArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  const Points baseline = read_baseline(args.baseline);
  if (baseline.empty() && !args.update) {
    throw ConfigError(
        fmt::format("{}: no baseline to compare with (run with --update to create it)", args.baseline));
  }
  Points current;
  std::set<std::string> names;
  bool root = true;
  for (const std::string& path : args.scenarios) {
    const Scenario scenario = load_scenario(path);
    if (!names.insert(scenario.name).second)
      throw ConfigError(fmt::format("{}: scenario name '{}' is used twice", path, scenario.name));
    PredictOptions options;
    options.progress = ::isatty(STDERR_FILENO);
    use_simulator(options, !args.exact);
    options.jobs = args.jobs;
    const auto distributed = predict_distributed(scenario, options);
    if (!distributed) {  // a rank other than 0 of an MPI launch: rank 0 judges and prints
      root = false;
      continue;
    }
    const std::vector<PointResult>& results = *distributed;
    for (const PointResult& r : results) {
      current[key_of(scenario.name, r.point->label())] =
          Figures{r.point->gpus(), r.prediction.step_s, r.prediction.efficiency};
    }
    fmt::print("regress: {} ({}): {} points\n", scenario.name, path, results.size());
  }
  if (!root) return 0;

  std::vector<Verdict> verdicts;
  for (const auto& [key, now] : current) {
    const auto bar = key.find('|');
    Verdict v{key.substr(0, bar), key.substr(bar + 1), Verdict::Same, ""};
    const auto it = baseline.find(key);
    if (it == baseline.end()) {
      v.kind = Verdict::New;
      v.detail = fmt::format("no baseline for this point (efficiency {:.2f}%, step {:.3f} ms)",
                             100 * now.efficiency, now.step_s * 1e3);
    } else {
      const Figures& was = it->second;
      const double efficiency_drop = was.efficiency - now.efficiency;
      const double step_rise = (now.step_s - was.step_s) / was.step_s;
      v.detail = fmt::format("efficiency {:.2f}% -> {:.2f}%, step {:.3f} -> {:.3f} ms ({:+.1f}%)",
                             100 * was.efficiency, 100 * now.efficiency, was.step_s * 1e3, now.step_s * 1e3,
                             100 * step_rise);
      if (efficiency_drop > args.tolerance || step_rise > args.tolerance) {
        v.kind = Verdict::Regressed;
      } else if (-efficiency_drop > args.tolerance || -step_rise > args.tolerance) {
        v.kind = Verdict::Improved;
      } else {
        v.detail.clear();
      }
    }
    verdicts.push_back(std::move(v));
  }
  for (const auto& [key, was] : baseline) {
    const auto bar = key.find('|');
    if (names.count(key.substr(0, bar)) && !current.count(key)) {
      verdicts.push_back({key.substr(0, bar), key.substr(bar + 1), Verdict::Missing,
                          "in the baseline but no longer predicted"});
    }
  }

  int counts[5] = {};
  for (const Verdict& v : verdicts) {
    ++counts[v.kind];
    static const char* const tags[] = {"", "improved", "REGRESSED", "NEW", "MISSING"};
    if (v.kind != Verdict::Same)
      fmt::print("{:>9}  {} | {}: {}\n", tags[v.kind], v.scenario, v.point, v.detail);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!args.junit.empty()) write_junit(args.junit, verdicts, seconds);
  fmt::print(
      "regress: {} points: {} within {:.1f}%, {} improved, {} regressed, {} new, {} missing ({:.1f} s)\n",
      verdicts.size(), counts[Verdict::Same], 100 * args.tolerance, counts[Verdict::Improved],
      counts[Verdict::Regressed], counts[Verdict::New], counts[Verdict::Missing], seconds);
  if (args.update) {
    Points merged;
    for (const auto& [key, f] : baseline)  // other scenarios' points stay
      if (!names.count(key.substr(0, key.find('|')))) merged[key] = f;
    for (const auto& [key, f] : current)
      merged[key] = f;
    write_baseline(args.baseline, merged);
    fmt::print("regress: updated {} ({} points)\n", args.baseline, merged.size());
    return 0;
  }
  return counts[Verdict::Regressed] + counts[Verdict::New] + counts[Verdict::Missing] > 0 ? 1 : 0;
}

}  // namespace

void add_regress_command(CLI::App& app) {
  auto args = std::make_shared<RegressArgs>();
  auto* cmd = app.add_subcommand(
      "regress",
      "CI gate: predict scenarios and fail when efficiency or step time regressed from a baseline");
  cmd->add_option("scenarios", args->scenarios, "scenario YAML files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--baseline", args->baseline, "baseline JSON (created by --update)")->required();
  cmd->add_option("--tolerance", args->tolerance,
                  "allowed efficiency drop (absolute, 0.01 = 1 point) and relative step-time rise")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--update", args->update, "rewrite the baseline with this run's predictions");
  cmd->add_option("--junit", args->junit, "also write a JUnit XML report to FILE");
  cmd->add_option(
         "-j,--jobs", args->jobs,
         "threads for the α-β points, SimGrid processes for the simulated ones (default 0: one per core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--exact", args->exact,
                "simulate `backend: sim` points op by op (the reference) instead of by pattern (each phase's "
                "flows solved once in SimGrid; docs/simulation.md compares the two)");
  cmd->callback([args] {
    const int code = run_regress(*args);
    if (code != 0) throw ExitStatus{code};
  });
}

}  // namespace cclab::cli
