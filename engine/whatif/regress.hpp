// The CI gate on scaling efficiency (`cclab regress`): the committed baseline of every scenario point's
// efficiency and step time, and the verdict on each point of a new prediction against it. An efficiency drop
// or a step-time rise beyond the tolerance is a regression; improvements are reported, not failures; points
// without a baseline, or baseline points a scenario no longer produces, fail too: the baseline must be
// updated on purpose (--update), in the same change that moves it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace cclab {

struct BaselineFigures {
  int gpus = 0;
  double step_s = 0;
  double efficiency = 0;
};
// "scenario|point" -> figures.
using BaselinePoints = std::map<std::string, BaselineFigures>;
std::string baseline_key(const std::string& scenario, const std::string& point);

// The baseline file (JSON, version 1); empty when the file does not exist. ConfigError naming the file when
// it is not a baseline.
BaselinePoints read_baseline(const std::string& path);
// Written atomically, one point per line, so that a change reads as a diff of the points that moved.
void write_baseline(const std::string& path, const BaselinePoints& points);
// The baseline with `scenarios`' points replaced by `current` (other scenarios' points stay).
BaselinePoints merged_baseline(const BaselinePoints& baseline, const BaselinePoints& current,
                               const std::set<std::string>& scenarios);

struct Verdict {
  std::string scenario, point;
  enum Kind { Same, Improved, Regressed, New, Missing } kind = Same;
  std::string detail;
  bool fails() const { return kind == Regressed || kind == New || kind == Missing; }
};
// Every point of `current` against the baseline, then the baseline points of `scenarios` no longer predicted.
std::vector<Verdict> judge(const BaselinePoints& current, const BaselinePoints& baseline,
                           const std::set<std::string>& scenarios, double tolerance);

// A JUnit XML report: a test suite per scenario, a test case per point.
void write_junit(const std::string& path, const std::vector<Verdict>& verdicts, double seconds);

}  // namespace cclab
