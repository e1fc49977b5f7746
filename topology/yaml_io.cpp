#include "topology/yaml_io.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>

#include <yaml-cpp/yaml.h>

#include "common/error.hpp"
#include "common/files.hpp"
#include "common/units.hpp"

namespace cclab::topo {
namespace {

// Context for error messages: "file:line: field: message".
struct Where {
  const std::string& source;
  [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& message) const {
    throw_input_error(source, node.IsDefined() ? node.Mark().line + 1 : 0, field, message);
  }
};

std::string scalar(const Where& w, const YAML::Node& parent, const char* key, const std::string& field) {
  const YAML::Node node = parent[key];
  if (!node) w.fail(parent, field, fmt::format("missing required field '{}'", key));
  if (!node.IsScalar()) w.fail(node, field, "expected a scalar value");
  return node.Scalar();
}

// Names travel into SimGrid platforms, DOT files and YAML dumps: printable ASCII only, so that every one of
// them round-trips (the topology fuzzer found control bytes that the YAML emitter escapes one way and the
// parser reads back another).
std::string name(const Where& w, const YAML::Node& parent, const char* key, const std::string& field) {
  std::string text = scalar(w, parent, key, field);
  for (unsigned char c : text)
    if (c < 0x20 || c > 0x7e)
      w.fail(parent[key], field, fmt::format("names are printable ASCII (found byte 0x{:02x})", c));
  return text;
}

int integer(const Where& w, const YAML::Node& parent, const char* key, const std::string& field,
            int min_value) {
  const std::string text = scalar(w, parent, key, field);
  int value = 0;
  try {
    std::size_t used = 0;
    value = std::stoi(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    w.fail(parent[key], field, fmt::format("'{}' is not an integer", text));
  }
  if (value < min_value) w.fail(parent[key], field, fmt::format("must be >= {} (got {})", min_value, value));
  return value;
}

bool boolean(const Where& w, const YAML::Node& parent, const char* key, const std::string& field) {
  const std::string text = scalar(w, parent, key, field);
  if (text == "true") return true;
  if (text == "false") return false;
  w.fail(parent[key], field, fmt::format("'{}' is not true or false", text));
}

template <typename Parse>
auto with_units(const Where& w, const YAML::Node& parent, const char* key, const std::string& field,
                Parse parse) {
  const std::string text = scalar(w, parent, key, field);
  try {
    return parse(text);
  } catch (const ConfigError& e) {
    w.fail(parent[key], field, e.what());
  }
}

void check_keys(const Where& w, const YAML::Node& map, const std::string& field,
                const std::set<std::string>& allowed, const std::string& valid) {
  if (!map.IsMap()) w.fail(map, field, fmt::format("expected a mapping with keys {}", valid));
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) w.fail(kv.first, field, "a key must be a plain name");
    const std::string key = kv.first.Scalar();
    if (!allowed.count(key))
      w.fail(kv.first, field + "." + clip(key), fmt::format("unknown field (valid: {})", valid));
  }
}

struct UnitForm {
  double scale;
  const char* suffix;
};
constexpr std::array kTimeForms{UnitForm{1, "s"}, UnitForm{1e-3, "ms"}, UnitForm{1e-6, "us"},
                                UnitForm{1e-9, "ns"}};
constexpr std::array kBandwidthForms{UnitForm{1e9, "GB/s"}, UnitForm{1e6, "MB/s"}, UnitForm{1, "B/s"}};

// Text that parses back to exactly `value`, with as few significant digits as any unit allows; among those,
// the natural unit (the largest one the value is at least 1 of), else the shortest text. So "0.5us" rather
// than "499.99999999999994ns" (0.5e-6 / 1e-9 is not 500 in binary), and "31.507692307692306GB/s" for PCIe 4
// x16, whose 128b/130b rate has no short decimal form in any unit. Exponent forms are avoided; the value in
// base units with every digit is the last resort.
template <typename Forms, typename Parse>
std::string exact_text(double value, const Forms& forms, Parse parse) {
  std::string best;
  int best_digits = 18;
  bool best_natural = false;
  bool natural_taken = false;  // forms go from the largest unit down: the first one >= 1 is the natural one
  for (const UnitForm& form : forms) {
    const bool natural = !natural_taken && value / form.scale >= 1;
    natural_taken = natural_taken || natural;
    for (int digits = 1; digits <= 17 && digits <= best_digits; ++digits) {
      const std::string number = fmt::format("{:.{}g}", value / form.scale, digits);
      if (number.find_first_of("en") != std::string::npos) continue;  // exponent, inf or nan
      std::string text = number + form.suffix;
      if (parse(text) != value) continue;
      const bool better = digits < best_digits || (!best_natural && (natural || text.size() < best.size()));
      if (better) best = std::move(text), best_digits = digits, best_natural = natural;
      break;
    }
  }
  if (!best.empty()) return best;
  const auto base = std::find_if(forms.begin(), forms.end(), [](const UnitForm& f) { return f.scale == 1; });
  return fmt::format("{}{}", value, base->suffix);
}

}  // namespace

Topology parse_topology_yaml(const std::string& text, const std::string& source) {
  const Where w{source};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) w.fail(root, "topology", "expected a mapping with keys name, vertices, links");
  check_keys(w, root, "topology",
             {"name", "gpu_arch", "host_cpu", "ecmp_seed", "vertices", "links", "link_models", "background"},
             "name, gpu_arch, host_cpu, ecmp_seed, vertices, links, link_models, background");

  Topology t(root["name"] ? name(w, root, "name", "name") : std::string("unnamed"));
  // An optional top-level name from a closed list (`what` says what it names in the error).
  auto named = [&](const char* key, auto parse, std::string_view what, std::string_view valid) {
    using Value = typename std::invoke_result_t<decltype(parse), std::string_view>::value_type;
    if (!root[key]) return std::optional<Value>{};
    const std::string text = scalar(w, root, key, key);
    const auto parsed = parse(text);
    if (!parsed) w.fail(root[key], key, fmt::format("unknown {} '{}' (valid: {})", what, text, valid));
    return parsed;
  };
  t.set_gpu_arch(named("gpu_arch", parse_gpu_arch, "architecture", kGpuArchNames));
  t.set_host_cpu(named("host_cpu", parse_host_cpu, "host CPU", kHostCpuNames));
  if (root["ecmp_seed"])
    t.set_ecmp_seed(static_cast<std::uint64_t>(integer(w, root, "ecmp_seed", "ecmp_seed", 0)));
  const YAML::Node vertices = root["vertices"];
  if (!vertices || !vertices.IsSequence())
    w.fail(vertices ? vertices : root, "vertices", "expected a list of vertices");
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const YAML::Node v = vertices[i];
    const std::string field = fmt::format("vertices[{}]", i);
    check_keys(w, v, field, {"name", "kind", "node", "local_rank", "sharp"},
               "name, kind, node, local_rank, sharp");
    Vertex vx;
    vx.name = name(w, v, "name", field + ".name");
    if (vx.name.empty()) w.fail(v["name"], field + ".name", "must not be empty");
    const std::string kind = scalar(w, v, "kind", field + ".kind");
    auto parsed = parse_vertex_kind(kind);
    if (!parsed)
      w.fail(v["kind"], field + ".kind",
             fmt::format("unknown kind '{}' (valid: {})", kind, kVertexKindNames));
    vx.kind = *parsed;
    if (v["node"]) vx.node = integer(w, v, "node", field + ".node", 0);
    if (v["local_rank"]) vx.local_rank = integer(w, v, "local_rank", field + ".local_rank", 0);
    if (v["sharp"]) vx.sharp = boolean(w, v, "sharp", field + ".sharp");
    if (vx.kind == VertexKind::Gpu && (vx.node < 0 || vx.local_rank < 0)) {
      w.fail(v, field, "a gpu needs 'node' and 'local_rank'");
    }
    if (t.find(vx.name))
      w.fail(v["name"], field + ".name", fmt::format("duplicate vertex name '{}'", vx.name));
    try {
      t.add_vertex(vx);
    } catch (const ConfigError& e) {
      w.fail(v, field, e.what());
    }
  }

  const YAML::Node links = root["links"];
  if (!links || !links.IsSequence()) w.fail(links ? links : root, "links", "expected a list of links");
  for (std::size_t i = 0; i < links.size(); ++i) {
    const YAML::Node l = links[i];
    const std::string field = fmt::format("links[{}]", i);
    check_keys(w, l, field, {"from", "to", "kind", "bandwidth", "latency"},
               "from, to, kind, bandwidth, latency");
    auto endpoint = [&](const char* key) {
      const std::string name = scalar(w, l, key, field + "." + key);
      auto v = t.find(name);
      if (!v) w.fail(l[key], field + "." + key, fmt::format("no vertex named '{}'", name));
      return *v;
    };
    const VertexId a = endpoint("from"), b = endpoint("to");
    if (a == b) w.fail(l, field, "a link must join two different vertices");
    const std::string kind = scalar(w, l, "kind", field + ".kind");
    auto parsed = parse_link_kind(kind);
    if (!parsed)
      w.fail(l["kind"], field + ".kind", fmt::format("unknown kind '{}' (valid: {})", kind, kLinkKindNames));
    const double bandwidth = with_units(w, l, "bandwidth", field + ".bandwidth", parse_bandwidth_Bps);
    const double latency = l["latency"] ? with_units(w, l, "latency", field + ".latency", parse_time_s) : 0.0;
    try {
      t.add_link(a, b, *parsed, bandwidth, latency);
    } catch (const ConfigError& e) {  // a value out of range
      w.fail(l, field, e.what());
    }
  }
  if (const YAML::Node models = root["link_models"]) {
    check_keys(w, models, "link_models",
               {"nvlink", "nvswitch", "pcie", "infiniband", "ethernet", "roce", "tcp", "efa", "socket", "qpi",
                "upi", "xgmi"},
               std::string(kLinkKindNames));
    for (const auto& kv : models) {
      const std::string kind_name = kv.first.Scalar();  // check_keys made sure it is a scalar
      const std::string field = "link_models." + kind_name;
      const YAML::Node m = kv.second;
      check_keys(w, m, field, {"efficiency", "overhead"}, "efficiency, overhead");
      const LinkKind kind = *parse_link_kind(kind_name);
      LinkModel model = t.link_model(kind);
      if (m["efficiency"]) {
        const std::string text = scalar(w, m, "efficiency", field + ".efficiency");
        try {
          std::size_t used = 0;
          model.efficiency = std::stod(text, &used);
          if (used != text.size()) throw std::invalid_argument(text);
        } catch (const std::exception&) {
          w.fail(m["efficiency"], field + ".efficiency", fmt::format("'{}' is not a number in (0, 1]", text));
        }
        if (!(model.efficiency > 0 && model.efficiency <= 1)) {
          w.fail(m["efficiency"], field + ".efficiency", fmt::format("{} is not in (0, 1]", text));
        }
      }
      if (m["overhead"]) model.overhead_s = with_units(w, m, "overhead", field + ".overhead", parse_time_s);
      t.set_link_model(kind, model);
    }
  }
  if (const YAML::Node background = root["background"]) {
    if (!background.IsSequence()) w.fail(background, "background", "expected a list of flows");
    for (std::size_t i = 0; i < background.size(); ++i) {
      const YAML::Node f = background[i];
      const std::string field = fmt::format("background[{}]", i);
      check_keys(w, f, field, {"from", "to", "streams"}, "from, to, streams");
      auto endpoint = [&](const char* key) {
        const std::string name = scalar(w, f, key, field + "." + key);
        auto v = t.find(name);
        if (!v) w.fail(f[key], field + "." + key, fmt::format("no vertex named '{}'", name));
        return *v;
      };
      Topology::BackgroundFlow flow{endpoint("from"), endpoint("to"), 1};
      if (f["streams"]) flow.streams = integer(w, f, "streams", field + ".streams", 1);
      try {
        t.add_background(flow);
      } catch (const ConfigError& e) {
        w.fail(f, field, e.what());
      }
    }
  }
  if (t.gpus().empty()) w.fail(vertices, "vertices", "the topology has no gpu");
  return t;
}

Topology load_topology_yaml_file(const std::string& path) {
  return parse_topology_yaml(read_input_file(path, "topology"), path);
}

std::string dump_topology_yaml(const Topology& t) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name();
  if (t.gpu_arch()) out << YAML::Key << "gpu_arch" << YAML::Value << std::string(to_string(*t.gpu_arch()));
  if (t.host_cpu()) out << YAML::Key << "host_cpu" << YAML::Value << std::string(to_string(*t.host_cpu()));
  if (t.ecmp_seed() != 0) out << YAML::Key << "ecmp_seed" << YAML::Value << t.ecmp_seed();
  out << YAML::Key << "vertices" << YAML::Value << YAML::BeginSeq;
  for (VertexId v = 0; v < t.num_vertices(); ++v) {
    const Vertex& vx = t.vertex(v);
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << vx.name << YAML::Key
        << "kind" << YAML::Value << std::string(to_string(vx.kind));
    if (vx.node >= 0) out << YAML::Key << "node" << YAML::Value << vx.node;
    if (vx.local_rank >= 0) out << YAML::Key << "local_rank" << YAML::Value << vx.local_rank;
    if (vx.sharp) out << YAML::Key << "sharp" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
  for (const Link& l : t.links()) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "from" << YAML::Value << t.vertex(l.a).name
        << YAML::Key << "to" << YAML::Value << t.vertex(l.b).name << YAML::Key << "kind" << YAML::Value
        << std::string(to_string(l.kind)) << YAML::Key << "bandwidth" << YAML::Value
        << exact_text(l.bandwidth_Bps, kBandwidthForms, parse_bandwidth_Bps) << YAML::Key << "latency"
        << YAML::Value << exact_text(l.latency_s, kTimeForms, parse_time_s) << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::Key << "link_models" << YAML::Value << YAML::BeginMap;
  for (LinkKind kind : kAllLinkKinds) {
    const LinkModel& m = t.link_model(kind);
    out << YAML::Key << std::string(to_string(kind)) << YAML::Value << YAML::Flow << YAML::BeginMap
        << YAML::Key << "efficiency" << YAML::Value << fmt::format("{}", m.efficiency) << YAML::Key
        << "overhead" << YAML::Value << exact_text(m.overhead_s, kTimeForms, parse_time_s) << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (!t.background().empty()) {
    out << YAML::Key << "background" << YAML::Value << YAML::BeginSeq;
    for (const Topology::BackgroundFlow& f : t.background()) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "from" << YAML::Value << t.vertex(f.from).name
          << YAML::Key << "to" << YAML::Value << t.vertex(f.to).name << YAML::Key << "streams" << YAML::Value
          << f.streams << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace cclab::topo
