#include "engine/whatif/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/error.hpp"
#include "common/files.hpp"
#include "common/units.hpp"
#include "topology/presets.hpp"

namespace cclab {
namespace {

// Reads one point of a scenario. Every scalar field may be a list (a sweep axis); axes are numbered in the
// order the reader meets them, which is fixed by the schema walk below, so that `choice[i]` selects the
// element of axis i. The first pass (empty `choice`) discovers the axes.
class Reader {
 public:
  struct Axis {
    std::string field;
    std::size_t size;
  };

  Reader(const std::string& source, std::vector<std::size_t> choice)
      : source_(source), choice_(std::move(choice)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& message) const {
    if (node.IsDefined() && node.Mark().is_null())  // a value given by --set, not read from the file
      throw_input_error(source_, 0, "--set " + field, message);
    throw_input_error(source_, node.IsDefined() ? node.Mark().line + 1 : 0, field, message);
  }

  // `map` must be a mapping whose keys are all in `allowed` (empty: any key).
  void expect_map(const YAML::Node& map, const std::string& field, const std::vector<std::string>& allowed) {
    if (!map.IsMap()) fail(map, field, "expected a mapping");
    std::set<std::string> seen;  // yaml-cpp keeps the first of two equal keys; a scenario must not have two
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(kv.first, field, "a key must be a plain name");
      const std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) fail(kv.first, join(field, clip(key)), "duplicate field");
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(kv.first, join(field, clip(key)),
             fmt::format("unknown field (valid: {})", fmt::join(allowed, ", ")));
      }
    }
  }

  // This point's value of the scalar field map[key], or nothing when it is absent.
  struct Leaf {
    YAML::Node node;
    std::string text;
    std::string field;
  };
  std::optional<Leaf> leaf(const YAML::Node& map, const std::string& key, const std::string& parent) {
    const std::string field = join(parent, key);
    const YAML::Node node = map[key];
    if (!node) return std::nullopt;
    if (node.IsNull()) fail(node, field, "has no value");
    if (node.IsMap()) fail(node, field, "expected a value or a list of values to sweep");
    if (!node.IsSequence()) return Leaf{node, node.Scalar(), field};
    if (node.size() == 0) fail(node, field, "an empty list sweeps nothing");
    const std::size_t axis = axes_.size();
    axes_.push_back({field, node.size()});
    const std::size_t pick = axis < choice_.size() ? choice_[axis] : 0;
    // A new handle: assigning to `node` would overwrite the list in the document (yaml-cpp semantics).
    const YAML::Node element = node[pick];
    if (!element.IsScalar()) fail(element, fmt::format("{}[{}]", field, pick), "expected a value");
    if (node.size() > 1) swept_.emplace_back(field, element.Scalar());
    return Leaf{element, element.Scalar(), field};
  }

  Leaf required(const YAML::Node& map, const std::string& key, const std::string& parent) {
    if (auto l = leaf(map, key, parent)) return *l;
    fail(map, join(parent, key), "missing required field");
  }

  template <typename Parse>
  auto with_units(const Leaf& l, Parse parse) {
    try {
      return parse(l.text);
    } catch (const ConfigError& e) {
      fail(l.node, l.field, e.what());
    }
  }

  long integer(const Leaf& l, long min_value) {
    long value = 0;
    try {
      std::size_t used = 0;
      value = std::stol(l.text, &used);
      if (used != l.text.size()) throw std::invalid_argument(l.text);
    } catch (const std::exception&) {
      fail(l.node, l.field, fmt::format("'{}' is not an integer", l.text));
    }
    if (value < min_value) fail(l.node, l.field, fmt::format("must be >= {} (got {})", min_value, value));
    return value;
  }

  double number(const Leaf& l, double min_value, double max_value) {
    double value = 0;
    try {
      std::size_t used = 0;
      value = std::stod(l.text, &used);
      if (used != l.text.size()) throw std::invalid_argument(l.text);
    } catch (const std::exception&) {
      fail(l.node, l.field, fmt::format("'{}' is not a number", l.text));
    }
    if (!(value >= min_value && value <= max_value))
      fail(l.node, l.field, fmt::format("must be in [{}, {}] (got {})", min_value, max_value, value));
    return value;
  }

  bool boolean(const Leaf& l) {
    if (l.text == "true" || l.text == "yes" || l.text == "on") return true;
    if (l.text == "false" || l.text == "no" || l.text == "off") return false;
    fail(l.node, l.field, fmt::format("'{}' is not true or false", l.text));
  }

  const std::string& one_of(const Leaf& l, const std::vector<std::string>& valid) {
    for (const std::string& v : valid)
      if (l.text == v) return v;
    fail(l.node, l.field, fmt::format("'{}' is not valid (valid: {})", l.text, fmt::join(valid, ", ")));
  }

  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<std::pair<std::string, std::string>>& swept() const { return swept_; }

  static std::string join(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
  }

 private:
  const std::string& source_;
  std::vector<std::size_t> choice_;
  std::vector<Axis> axes_;
  std::vector<std::pair<std::string, std::string>> swept_;
};

// Topologies, workloads: built once per distinct spec and shared by the points that use them.
struct Resolved {
  std::map<std::string, std::shared_ptr<const topo::Topology>> topologies;
  std::map<std::string, std::shared_ptr<const Workload>> workloads;
  std::map<std::string, FaultedTopology> faulted;  // per topology + faults
};

std::string resolve_path(const std::string& base_dir, const std::string& path) {
  if (base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

bool looks_like_file(const std::string& spec) {
  for (const char* ext : {".csv", ".yaml", ".yml", ".json"})
    if (spec.ends_with(ext)) return true;
  return false;
}

void read_topology(Reader& r, const YAML::Node& root, const std::string& base_dir, Resolved& cache,
                   ScenarioPoint& p) {
  const YAML::Node t = root["topology"];
  if (!t) r.fail(root, "topology", "missing required section (a preset with its parameters, or file:)");
  r.expect_map(t, "topology", {});
  if (t["file"]) {
    r.expect_map(t, "topology", {"file"});
    const auto file = r.required(t, "file", "topology");
    p.topology_spec = resolve_path(base_dir, file.text);
  } else {
    const auto preset = r.required(t, "preset", "topology");
    const auto nodes = r.required(t, "nodes", "topology");
    std::string spec = fmt::format("{}:{}", preset.text, r.integer(nodes, 1));
    for (const auto& kv : t) {  // every other key is a preset parameter (docs/topology-format.md)
      if (!kv.first.IsScalar()) r.fail(kv.first, "topology", "a key must be a plain name");
      const std::string key = kv.first.Scalar();
      if (key == "preset" || key == "nodes") continue;
      spec += fmt::format(",{}={}", key, r.required(t, key, "topology").text);
    }
    p.topology_spec = spec;
  }
  auto& topology = cache.topologies[p.topology_spec];
  if (!topology) {
    try {
      topology = topo::load_topology_shared(p.topology_spec);
    } catch (const ConfigError& e) {
      cache.topologies.erase(p.topology_spec);
      r.fail(t, "topology", e.what());
    }
  }
  p.topology = topology;
}

void read_workload_and_compute(Reader& r, const YAML::Node& root, const std::string& base_dir,
                               Resolved& cache, ScenarioPoint& p) {
  const auto w = r.required(root, "workload", "");
  const std::string spec = looks_like_file(w.text) ? resolve_path(base_dir, w.text) : w.text;
  auto& workload = cache.workloads[spec];
  if (!workload) {
    try {
      workload = std::make_shared<const Workload>(make_workload(spec));
    } catch (const ConfigError& e) {
      cache.workloads.erase(spec);
      r.fail(w.node, "workload", e.what());
    }
  }
  p.workload = workload;

  const YAML::Node c = root["compute"];
  if (!c) r.fail(root, "compute", "missing required section (gpu: NAME, or forward/backward/batch times)");
  r.expect_map(c, "compute",
               {"gpu", "forward", "backward", "optimizer", "batch", "overlap_slowdown", "flops_per_byte",
                "bucket_overhead", "input_floor", "jitter"});
  if (auto gpu = r.leaf(c, "gpu", "compute")) {
    if (c["forward"] || c["backward"] || c["batch"])
      r.fail(c, "compute", "give either gpu (the defaults table) or forward/backward/batch, not both");
    if (!default_compute(w.text, gpu->text, p.compute)) {
      r.fail(
          gpu->node, gpu->field,
          fmt::format(
              "no default compute profile for {} on '{}' (defaults exist for resnet50 on p100, v100, "
              "a100, h100 and h200, inception_v3 and vgg16 on p100, resnet101 and bert_large on a100); give "
              "forward/backward/batch instead",
              w.text, gpu->text));
    }
    p.compute_source = "defaults for " + gpu->text;
  } else {
    p.compute.forward_s = r.with_units(r.required(c, "forward", "compute"), parse_time_s);
    p.compute.backward_s = r.with_units(r.required(c, "backward", "compute"), parse_time_s);
    p.compute.batch_per_gpu = static_cast<int>(r.integer(r.required(c, "batch", "compute"), 1));
    p.compute_source = "scenario";
  }
  if (auto opt = r.leaf(c, "optimizer", "compute")) p.compute.optimizer_s = r.with_units(*opt, parse_time_s);
  // The fraction of backward's rate a running collective takes (0.06: 6 %); default channels / SMs.
  if (auto slow = r.leaf(c, "overlap_slowdown", "compute"))
    p.compute.overlap_slowdown = r.number(*slow, 0, 0.9);
  // The GPU's machine balance for gradient readiness; default from the topology's GPU.
  if (auto balance = r.leaf(c, "flops_per_byte", "compute"))
    p.compute.flops_per_byte = r.number(*balance, 1, 1e4);
  if (auto overhead = r.leaf(c, "bucket_overhead", "compute"))
    p.compute.bucket_overhead_s = r.with_units(*overhead, parse_time_s);
  if (auto floor = r.leaf(c, "input_floor", "compute"))
    p.compute.input_floor_s = r.with_units(*floor, parse_time_s);
  // A GPU's step-to-step variation (coefficient of variation, 0.02: 2 %); the step waits for the slowest.
  if (auto jitter = r.leaf(c, "jitter", "compute")) p.compute.jitter = r.number(*jitter, 0, 0.5);
}

void read_communication(Reader& r, const YAML::Node& root, ScenarioPoint& p) {
  const YAML::Node c = root["communication"];
  if (!c) return;  // all defaults
  r.expect_map(c, "communication",
               {"algorithm", "fusion", "bucket", "first_bucket", "cycle", "fp16", "sync", "chunk", "channels",
                "protocol", "reduce_rate", "inter"});
  const auto algorithm = r.leaf(c, "algorithm", "communication");
  if (algorithm) p.algorithm = algorithm->text;
  if (auto f = r.leaf(c, "fusion", "communication")) {
    const bool horovod = r.one_of(*f, {"ddp", "horovod"}) == "horovod";
    p.fusion.style = horovod ? FusionStyle::HorovodCycle : FusionStyle::DdpBuckets;
    if (horovod) p.fusion.threshold_bytes = 128ULL << 20;  // HOROVOD_FUSION_THRESHOLD's default
  }
  if (auto b = r.leaf(c, "bucket", "communication"))
    p.fusion.threshold_bytes = r.with_units(*b, parse_size_bytes);
  if (auto b = r.leaf(c, "first_bucket", "communication"))
    p.fusion.first_bucket_bytes = r.with_units(*b, parse_size_bytes);
  if (auto t = r.leaf(c, "cycle", "communication")) p.fusion.cycle_s = r.with_units(*t, parse_time_s);
  if (auto h = r.leaf(c, "fp16", "communication")) p.fusion.fp16_compression = r.boolean(*h);
  if (auto pr = r.leaf(c, "protocol", "communication")) {
    // One protocol, or as NCCL_PROTO takes them: the cheapest of a list, or of NCCL's but some ("^ll128").
    const auto set =
        pr->text.find_first_of(",^") != std::string::npos ? nccl_protocol_set(pr->text) : std::nullopt;
    if (set) {
      p.cost.protocol = Protocol::Auto;
      p.cost.auto_protocols = *set;
    } else if (const auto one = parse_protocol(pr->text)) {
      p.cost.protocol = *one;
    } else {
      r.fail(pr->node, pr->field,
             fmt::format(
                 "'{}' is not valid (valid: auto, ll, ll128, simple, raw, or as NCCL_PROTO takes them: a "
                 "list such as ll,simple, or ^ and the ones to leave out)",
                 pr->text));
    }
  }
  if (auto rr = r.leaf(c, "reduce_rate", "communication"))
    p.cost.reduce_Bps = r.with_units(*rr, parse_bandwidth_Bps);
  if (auto s = r.leaf(c, "sync", "communication"))
    p.sync =
        r.one_of(*s, {"allreduce", "zero"}) == "zero" ? GradientSync::ZeroSharded : GradientSync::AllReduce;
  // ZeRO runs a reduce-scatter and an allgather per bucket: the algorithm must plan both (checked here, with
  // the line, rather than when the sweep reaches the point).
  if (algorithm) {
    const bool zero = p.sync == GradientSync::ZeroSharded;
    auto plans = [&](Collective c) {
      return find_algorithm(c, algorithm->text) != nullptr || is_selection(c, algorithm->text);
    };
    const bool valid = zero ? plans(Collective::ReduceScatter) && plans(Collective::AllGather)
                            : plans(Collective::AllReduce);
    std::vector<std::string> names{"auto", "nccl"};
    for (const Algorithm* alg : algorithms_for(zero ? Collective::ReduceScatter : Collective::AllReduce))
      if (!zero || find_algorithm(Collective::AllGather, alg->name)) names.push_back(alg->name);
    if (!valid) {
      if (zero)
        r.fail(algorithm->node, algorithm->field,
               fmt::format("'{}' cannot plan the reduce-scatter and allgather of sync: zero (valid: {})",
                           algorithm->text, fmt::join(names, ", ")));
      r.one_of(*algorithm, names);
    }
  }
  if (auto k = r.leaf(c, "chunk", "communication")) p.plan.chunk_bytes = r.with_units(*k, parse_size_bytes);
  if (auto n = r.leaf(c, "channels", "communication")) p.plan.channels = static_cast<int>(r.integer(*n, 0));
  // Hierarchical's inter-node allreduce (auto also plans hierarchical with it).
  if (auto i = r.leaf(c, "inter", "communication")) p.plan.inter = r.one_of(*i, {"ring", "tree"});
}

// Exactly one of kind / link / fraction (+ seed) under `node`.
LinkSelection read_selection(Reader& r, const YAML::Node& node, const std::string& field) {
  LinkSelection s;
  int selectors = 0;
  if (auto k = r.leaf(node, "kind", field)) s.kind = k->text, ++selectors;
  if (auto l = r.leaf(node, "link", field)) s.link = l->text, ++selectors;
  if (auto x = r.leaf(node, "fraction", field)) s.fraction = r.number(*x, 1e-9, 1), ++selectors;
  if (selectors != 1) r.fail(node, field, "choose the links with exactly one of kind, link or fraction");
  if (s.link == "none") s.link.clear();  // a sweep's healthy point: `link: [none, leaf0-spine0]`
  if (auto seed = r.leaf(node, "seed", field)) s.seed = static_cast<std::uint64_t>(r.integer(*seed, 0));
  return s;
}

void read_faults(Reader& r, const YAML::Node& root, Resolved& cache, ScenarioPoint& p) {
  const YAML::Node f = root["faults"];
  if (!f) return;
  r.expect_map(f, "faults", {"degrade", "fail", "stragglers", "lost_nodes"});
  if (const YAML::Node d = f["degrade"]) {
    r.expect_map(d, "faults.degrade", {"kind", "link", "fraction", "seed", "bandwidth", "latency"});
    p.degrade.links = read_selection(r, d, "faults.degrade");
    if (auto b = r.leaf(d, "bandwidth", "faults.degrade")) p.degrade.bandwidth_factor = r.number(*b, 1e-6, 1);
    if (auto l = r.leaf(d, "latency", "faults.degrade"))
      p.degrade.extra_latency_s = r.with_units(*l, parse_time_s);
  }
  if (const YAML::Node x = f["fail"]) {
    r.expect_map(x, "faults.fail", {"kind", "link", "fraction", "seed"});
    p.fail.links = read_selection(r, x, "faults.fail");
  }
  if (p.degrade.active() || p.fail.active()) {
    const std::string key = p.topology_spec + " | " + p.degrade.key() + " | fail " + p.fail.links.key();
    auto& faulted = cache.faulted[key];
    if (!faulted.topology) {
      try {
        faulted = faulted_topology(p.topology_spec, p.degrade, p.fail);
      } catch (const ConfigError& e) {
        cache.faulted.erase(key);
        r.fail(f, "faults", e.what());
      }
    }
    p.topology = faulted.topology;
    p.degraded_links = faulted.degraded_links;
    p.failed_links = faulted.failed_links;
  }
  if (const YAML::Node ln = f["lost_nodes"]) {
    const std::string field = "faults.lost_nodes";
    r.expect_map(ln, field, {"nodes", "at_step", "checkpoint_every", "checkpoint_write", "restart", "steps"});
    p.lost.nodes = static_cast<int>(r.integer(r.required(ln, "nodes", field), 0));
    p.lost.at_step = r.integer(r.required(ln, "at_step", field), 1);
    p.lost.checkpoint_every = r.integer(r.required(ln, "checkpoint_every", field), 1);
    if (auto w = r.leaf(ln, "checkpoint_write", field))
      p.lost.checkpoint_write_s = r.with_units(*w, parse_time_s);
    p.lost.restart_s = r.with_units(r.required(ln, "restart", field), parse_time_s);
    p.lost.steps = r.integer(r.required(ln, "steps", field), 1);
    if (p.lost.at_step >= p.lost.steps)
      r.fail(ln, field + ".at_step", fmt::format("the job has only {} steps", p.lost.steps));
    if (p.lost.active()) {
      if (p.degrade.active() || p.fail.active())
        r.fail(ln, field, "combine lost nodes with degraded or failed links in separate scenarios");
      std::string spec;
      try {
        spec = shrunk_topology_spec(p.topology_spec, p.lost.nodes);
      } catch (const ConfigError& e) {
        r.fail(ln, field, e.what());
      }
      auto& shrunk = cache.topologies[spec];
      if (!shrunk) shrunk = topo::load_topology_shared(spec);
      p.shrunk_topology = shrunk;
    }
  }
  if (const YAML::Node st = f["stragglers"]) {
    r.expect_map(st, "faults.stragglers", {"gpus", "factor"});
    p.stragglers.gpus = static_cast<int>(r.integer(r.required(st, "gpus", "faults.stragglers"), 0));
    p.stragglers.factor = r.number(r.required(st, "factor", "faults.stragglers"), 1, 1000);
    if (p.stragglers.gpus > p.gpus())
      r.fail(st, "faults.stragglers.gpus", fmt::format("more stragglers than GPUs ({})", p.gpus()));
  }
}

ScenarioPoint read_point(Reader& r, const YAML::Node& root, const std::string& base_dir, Resolved& cache) {
  ScenarioPoint p;
  p.algorithm = "auto";
  read_topology(r, root, base_dir, cache, p);
  read_workload_and_compute(r, root, base_dir, cache, p);
  read_communication(r, root, p);
  read_faults(r, root, cache, p);
  if (auto b = r.leaf(root, "backend", ""))
    p.backend = r.one_of(*b, {"ab", "sim"}) == "sim" ? TimeBackend::Sim : TimeBackend::AlphaBeta;
  p.swept = r.swept();
  return p;
}

// Labels use a field's last name ("nodes", "algorithm") unless two swept fields share it.
std::vector<std::string> short_names(const std::vector<Reader::Axis>& axes) {
  std::map<std::string, int> uses;
  auto last = [](const std::string& f) { return f.substr(f.rfind('.') + 1); };
  for (const auto& a : axes)
    if (a.size > 1) ++uses[last(a.field)];
  std::vector<std::string> names;
  for (const auto& a : axes)
    names.push_back(uses[last(a.field)] > 1 ? a.field : last(a.field));
  return names;
}

// A YAML value without source marks (so that errors name --set rather than a line): a scalar or a list of
// scalars.
YAML::Node unmarked(const YAML::Node& value) {
  if (value.IsSequence()) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (const YAML::Node& item : value)
      list.push_back(item.IsScalar() ? YAML::Node(item.Scalar()) : item);
    return list;
  }
  return value.IsScalar() ? YAML::Node(value.Scalar()) : value;
}

void set_path(YAML::Node node, const std::vector<std::string>& keys, std::size_t depth,
              const YAML::Node& value) {
  if (depth + 1 == keys.size()) {
    node[keys[depth]] = value;
    return;
  }
  if (!node[keys[depth]] || !node[keys[depth]].IsMap()) node[keys[depth]] = YAML::Node(YAML::NodeType::Map);
  set_path(node[keys[depth]], keys, depth + 1, value);
}

void apply_override(YAML::Node& root, const std::string& assignment, const std::string& source) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(
        fmt::format("{}: --set '{}': expected FIELD=VALUE, e.g. topology.nodes=[1,2,4]", source, assignment));
  }
  std::vector<std::string> keys;
  std::string field = assignment.substr(0, eq);
  for (std::size_t start = 0;;) {
    const auto dot = field.find('.', start);
    keys.push_back(field.substr(start, dot - start));
    if (keys.back().empty())
      throw ConfigError(fmt::format("{}: --set '{}': empty field name", source, field));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}: --set {}: not a valid value: {}", source, field, e.msg));
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  set_path(root, keys, 0, unmarked(value));
}

}  // namespace

std::string ScenarioPoint::label() const {
  std::string out;
  for (const auto& [field, value] : swept)
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", field, value);
  return out;
}

Scenario parse_scenario(const std::string& text, const std::string& source, const std::string& base_dir,
                        const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  for (const std::string& o : overrides)
    apply_override(root, o, source);
  Scenario s;
  s.source = source;
  Reader top(source, {});
  if (!root.IsMap()) top.fail(root, "scenario", "expected a mapping (see docs/scenario-format.md)");
  top.expect_map(root, "",
                 {"name", "description", "topology", "workload", "compute", "communication", "faults",
                  "backend", "outputs"});
  const YAML::Node name = root["name"];
  if (!name || !name.IsScalar() || name.Scalar().empty())
    top.fail(root, "name", "missing (a short identifier)");
  s.name = name.Scalar();
  if (const YAML::Node d = root["description"]) {
    if (!d.IsScalar()) top.fail(d, "description", "expected a line of text");
    s.description = d.Scalar();
  }
  if (const YAML::Node out = root["outputs"]) {
    top.expect_map(out, "outputs", {"dir"});
    if (const YAML::Node dir = out["dir"]) {
      if (!dir.IsScalar() || dir.Scalar().empty()) top.fail(dir, "outputs.dir", "expected a directory path");
      s.output_dir = dir.Scalar();
    }
  }

  // Discover the axes, then read every combination (first axis slowest).
  Resolved cache;
  Reader discovery(source, {});
  s.points.push_back(read_point(discovery, root, base_dir, cache));
  const auto& axes = discovery.axes();
  const std::vector<std::string> names = short_names(axes);
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].size > 1) s.swept_fields.push_back(names[i]);
  std::size_t total = 1;
  for (const auto& a : axes)
    total *= a.size;
  constexpr std::size_t kMaxPoints = 100000;
  if (total > kMaxPoints) {
    top.fail(root, "scenario",
             fmt::format("the sweep has {} points (more than {}); split it", total, kMaxPoints));
  }
  s.points.clear();
  std::vector<std::size_t> choice(axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    Reader r(source, choice);
    ScenarioPoint p = read_point(r, root, base_dir, cache);
    // Rename the swept fields to their short names.
    std::size_t k = 0;
    for (std::size_t i = 0; i < axes.size(); ++i)
      if (axes[i].size > 1) p.swept[k++].first = names[i];
    s.points.push_back(std::move(p));
    for (std::size_t i = axes.size(); i-- > 0;) {  // odometer: the last axis turns fastest
      if (++choice[i] < axes[i].size) break;
      choice[i] = 0;
    }
  }
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_input_file(path, "scenario"), path,
                        std::filesystem::path(path).parent_path().string(), overrides);
}

}  // namespace cclab
