#include "engine/schedule_json.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace cclab {
namespace {

using nlohmann::json;

json chunk_json(const Chunk& c) {
  return json{{"buffer", std::string(to_string(c.buffer))}, {"offset", c.offset}, {"count", c.count}};
}

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw ConfigError(fmt::format("{}: {}: {}", source_, field, message));
  }

  const json& member(const json& object, const char* key, const std::string& field) const {
    if (!object.is_object()) fail(field, "expected an object");
    auto it = object.find(key);
    if (it == object.end()) fail(field.empty() ? key : field + "." + key, "missing required field");
    return *it;
  }

  template <typename Int>
  Int integer(const json& value, const std::string& field, Int min_value, Int max_value) const {
    if (!value.is_number_integer()) fail(field, fmt::format("expected an integer, got {}", value.dump()));
    if (value.is_number_unsigned()) {
      const auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(max_value)) fail(field, fmt::format("{} is larger than {}", v, max_value));
      return static_cast<Int>(v);
    }
    const auto v = value.get<std::int64_t>();
    if (v < static_cast<std::int64_t>(min_value) ||
        (max_value >= 0 && static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)) > static_cast<std::uint64_t>(max_value))) {
      fail(field, fmt::format("{} is outside [{}, {}]", v, min_value, max_value));
    }
    return static_cast<Int>(v);
  }

  std::string text(const json& value, const std::string& field) const {
    if (!value.is_string()) fail(field, fmt::format("expected a string, got {}", value.dump()));
    return value.get<std::string>();
  }

  template <typename Parse>
  auto choice(const json& value, const std::string& field, Parse parse, std::string_view valid) const {
    const std::string name = text(value, field);
    auto parsed = parse(name);
    if (!parsed) fail(field, fmt::format("unknown value '{}' (valid: {})", name, valid));
    return *parsed;
  }

  Chunk chunk(const json& value, const std::string& field) const {
    Chunk c;
    c.buffer = choice(member(value, "buffer", field), field + ".buffer", parse_buffer, "input, output, scratch");
    c.offset = integer<std::uint64_t>(member(value, "offset", field), field + ".offset", 0, UINT64_MAX / 2);
    c.count = integer<std::uint64_t>(member(value, "count", field), field + ".count", 0, UINT64_MAX / 2);
    return c;
  }

 private:
  const std::string& source_;
};

}  // namespace

std::string schedule_to_json(const Schedule& s, int indent) {
  json doc;
  doc["collective"] = std::string(to_string(s.spec.collective));
  doc["algorithm"] = s.algorithm;
  doc["world_size"] = s.spec.world_size;
  doc["count"] = s.spec.count;
  doc["dtype"] = std::string(to_string(s.spec.dtype));
  doc["op"] = std::string(to_string(s.spec.op));
  doc["root"] = s.spec.root;
  doc["params"] = s.params;
  json ranks = json::array();
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const Program& p = s.ranks[r];
    json ops = json::array();
    for (const Op& op : p.ops) {
      json o{{"kind", std::string(to_string(op.kind))}};
      if (is_comm(op.kind)) o["peer"] = op.peer;
      o["channel"] = op.channel;
      if (reads_src(op.kind)) o["src"] = chunk_json(op.src);
      if (writes_dst(op.kind)) o["dst"] = chunk_json(op.dst);
      auto deps = p.deps_of(op);
      o["deps"] = std::vector<OpId>(deps.begin(), deps.end());
      ops.push_back(std::move(o));
    }
    ranks.push_back(json{{"rank", r}, {"scratch", p.scratch_count}, {"ops", std::move(ops)}});
  }
  doc["ranks"] = std::move(ranks);
  return doc.dump(indent);
}

Schedule schedule_from_json(const std::string& text, const std::string& source) {
  const Reader in(source);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ConfigError(fmt::format("{}: not valid JSON (byte {}): {}", source, e.byte, e.what()));
  }
  Schedule s;
  s.spec.collective = in.choice(in.member(doc, "collective", ""), "collective", parse_collective, kCollectiveNames);
  s.algorithm = in.text(in.member(doc, "algorithm", ""), "algorithm");
  s.spec.world_size = in.integer<int>(in.member(doc, "world_size", ""), "world_size", 1, 1 << 20);
  s.spec.count = in.integer<std::uint64_t>(in.member(doc, "count", ""), "count", 0, UINT64_MAX / 2);
  if (doc.contains("dtype")) s.spec.dtype = in.choice(doc["dtype"], "dtype", parse_dtype, kDTypeNames);
  if (doc.contains("op")) s.spec.op = in.choice(doc["op"], "op", parse_reduce_op, kReduceOpNames);
  if (doc.contains("root")) s.spec.root = in.integer<int>(doc["root"], "root", 0, s.spec.world_size - 1);
  if (doc.contains("params")) {
    if (!doc["params"].is_object()) in.fail("params", "expected an object");
    for (auto& [k, v] : doc["params"].items()) s.params[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  const json& ranks = in.member(doc, "ranks", "");
  if (!ranks.is_array()) in.fail("ranks", "expected an array");
  if (ranks.size() != static_cast<std::size_t>(s.spec.world_size)) {
    in.fail("ranks", fmt::format("has {} entries for world_size {}", ranks.size(), s.spec.world_size));
  }
  s.ranks.resize(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const std::string rf = fmt::format("ranks[{}]", i);
    const json& rj = ranks[i];
    const int rank = in.integer<int>(in.member(rj, "rank", rf), rf + ".rank", 0, s.spec.world_size - 1);
    if (rank != static_cast<int>(i)) in.fail(rf + ".rank", fmt::format("is {}, expected {} (ranks in order)", rank, i));
    Program& p = s.ranks[i];
    if (rj.contains("scratch")) p.scratch_count = in.integer<std::uint64_t>(rj["scratch"], rf + ".scratch", 0, UINT64_MAX / 2);
    const json& ops = in.member(rj, "ops", rf);
    if (!ops.is_array()) in.fail(rf + ".ops", "expected an array");
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::string of = fmt::format("{}.ops[{}]", rf, k);
      const json& oj = ops[k];
      Op op;
      op.kind = in.choice(in.member(oj, "kind", of), of + ".kind", parse_op_kind,
                          "send, recv, recv_reduce, copy, local_reduce");
      if (is_comm(op.kind)) {
        op.peer = in.integer<std::int32_t>(in.member(oj, "peer", of), of + ".peer", 0, s.spec.world_size - 1);
      }
      if (is_comm(op.kind) || oj.contains("channel")) {
        op.channel = in.integer<std::uint16_t>(in.member(oj, "channel", of), of + ".channel", 0, 4095);
      }
      if (reads_src(op.kind)) op.src = in.chunk(in.member(oj, "src", of), of + ".src");
      if (writes_dst(op.kind)) op.dst = in.chunk(in.member(oj, "dst", of), of + ".dst");
      std::vector<OpId> deps;
      if (oj.contains("deps")) {
        const json& dj = oj["deps"];
        if (!dj.is_array()) in.fail(of + ".deps", "expected an array of op indices");
        for (std::size_t d = 0; d < dj.size(); ++d) {
          deps.push_back(in.integer<OpId>(dj[d], fmt::format("{}.deps[{}]", of, d), 0,
                                          static_cast<OpId>(std::max<std::size_t>(ops.size(), 1) - 1)));
        }
      }
      p.add(op, deps);
    }
  }
  return s;
}

Schedule load_schedule_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open schedule file", path));
  std::stringstream text;
  text << in.rdbuf();
  return schedule_from_json(text.str(), path);
}

void save_schedule_file(const Schedule& schedule, const std::string& path) {
  // Write to a temporary name and rename, so a failed write never leaves a half file under the real name.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw ConfigError(fmt::format("{}: cannot write schedule file", path));
    out << schedule_to_json(schedule) << "\n";
    if (!out) throw ConfigError(fmt::format("{}: write failed", path));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace cclab
