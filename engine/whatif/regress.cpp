#include "engine/whatif/regress.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace cclab {
namespace {

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

}  // namespace

std::string baseline_key(const std::string& scenario, const std::string& point) {
  return scenario + "|" + point;
}

BaselinePoints read_baseline(const std::string& path) {
  BaselinePoints points;
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
      points[baseline_key(p.at("scenario").get<std::string>(), p.at("point").get<std::string>())] =
          BaselineFigures{static_cast<int>(gpus.get<std::int64_t>()), p.at("step_s").get<double>(),
                          p.at("efficiency").get<double>()};
    }
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("{}: not a valid baseline: {}", path, e.what()));
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
  return points;
}

void write_baseline(const std::string& path, const BaselinePoints& points) {
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

BaselinePoints merged_baseline(const BaselinePoints& baseline, const BaselinePoints& current,
                               const std::set<std::string>& scenarios) {
  BaselinePoints merged;
  for (const auto& [key, f] : baseline)
    if (!scenarios.count(key.substr(0, key.find('|')))) merged[key] = f;
  for (const auto& [key, f] : current)
    merged[key] = f;
  return merged;
}

std::vector<Verdict> judge(const BaselinePoints& current, const BaselinePoints& baseline,
                           const std::set<std::string>& scenarios, double tolerance) {
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
      const BaselineFigures& was = it->second;
      const double efficiency_drop = was.efficiency - now.efficiency;
      const double step_rise = (now.step_s - was.step_s) / was.step_s;
      v.detail = fmt::format("efficiency {:.2f}% -> {:.2f}%, step {:.3f} -> {:.3f} ms ({:+.1f}%)",
                             100 * was.efficiency, 100 * now.efficiency, was.step_s * 1e3, now.step_s * 1e3,
                             100 * step_rise);
      if (efficiency_drop > tolerance || step_rise > tolerance) {
        v.kind = Verdict::Regressed;
      } else if (-efficiency_drop > tolerance || -step_rise > tolerance) {
        v.kind = Verdict::Improved;
      } else {
        v.detail.clear();
      }
    }
    verdicts.push_back(std::move(v));
  }
  for (const auto& [key, was] : baseline) {
    const auto bar = key.find('|');
    if (scenarios.count(key.substr(0, bar)) && !current.count(key)) {
      verdicts.push_back({key.substr(0, bar), key.substr(bar + 1), Verdict::Missing,
                          "in the baseline but no longer predicted"});
    }
  }

  return verdicts;
}

void write_junit(const std::string& path, const std::vector<Verdict>& verdicts, double seconds) {
  int failures = 0;
  for (const Verdict& v : verdicts)
    failures += v.fails();
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
      f += v->fails();
    out << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n", xml_escape(scenario),
                       list.size(), f);
    for (const Verdict* v : list) {
      out << fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(scenario),
                         xml_escape(v->point.empty() ? "(single point)" : v->point));
      if (v->fails()) {
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

}  // namespace cclab
