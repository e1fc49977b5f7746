#include "engine/schedule_json.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/files.hpp"

namespace cclab {
namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw_input_error(source_, 0, field, message);
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
      if (v > static_cast<std::uint64_t>(max_value))
        fail(field, fmt::format("{} is larger than {}", v, max_value));
      return static_cast<Int>(v);
    }
    const auto v = value.get<std::int64_t>();
    if (v < static_cast<std::int64_t>(min_value) ||
        (max_value >= 0 &&
         static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)) > static_cast<std::uint64_t>(max_value))) {
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

  // A chunk is ["buffer", offset, count].
  Chunk chunk(const json& value, const std::string& field) const {
    if (!value.is_array() || value.size() != 3)
      fail(field, "expected [\"input|output|scratch\", offset, count]");
    Chunk c;
    c.buffer = choice(value[0], field + "[0]", parse_buffer, "input, output, scratch");
    c.offset = integer<std::uint64_t>(value[1], field + "[1]", 0, UINT64_MAX / 2);
    c.count = integer<std::uint64_t>(value[2], field + "[2]", 0, UINT64_MAX / 2);
    return c;
  }

 private:
  const std::string& source_;
};

}  // namespace

std::string schedule_to_json(const Schedule& s) {
  // Written with fmt rather than through a JSON DOM: a 256-GPU, 1 GiB ring has two million ops, and the DOM
  // would need gigabytes. Strings that users control (algorithm, params) go through nlohmann for escaping.
  fmt::memory_buffer out;
  auto quoted = [](const std::string& text) { return json(text).dump(); };
  json params(s.params);
  fmt::format_to(fmt::appender(out),
                 "{{\"collective\":\"{}\",\"algorithm\":{},\"world_size\":{},\"count\":{},\"dtype\":\"{}\","
                 "\"op\":\"{}\",\"root\":{},\"params\":{},\n\"ranks\":[",
                 to_string(s.spec.collective), quoted(s.algorithm), s.spec.world_size, s.spec.count,
                 to_string(s.spec.dtype), to_string(s.spec.op), s.spec.root, params.dump());
  auto chunk = [&](const char* key, const Chunk& c) {
    fmt::format_to(fmt::appender(out), ",\"{}\":[\"{}\",{},{}]", key, to_string(c.buffer), c.offset, c.count);
  };
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const Program& p = s.ranks[r];
    fmt::format_to(fmt::appender(out), "{}\n{{\"rank\":{},\"scratch\":{},\"ops\":[", r ? "," : "", r,
                   p.scratch_count);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const Op& op = p.ops[i];
      fmt::format_to(fmt::appender(out), "{}\n{{\"kind\":\"{}\"", i ? "," : "", to_string(op.kind));
      if (is_comm(op.kind)) fmt::format_to(fmt::appender(out), ",\"peer\":{}", op.peer);
      fmt::format_to(fmt::appender(out), ",\"channel\":{}", op.channel);
      if (reads_src(op.kind)) chunk("src", op.src);
      if (writes_dst(op.kind)) chunk("dst", op.dst);
      if (op.deps_count > 0)
        fmt::format_to(fmt::appender(out), ",\"deps\":[{}]", fmt::join(p.deps_of(op), ","));
      out.push_back('}');
    }
    fmt::format_to(fmt::appender(out), "]}}");
  }
  fmt::format_to(fmt::appender(out), "]}}\n");
  return fmt::to_string(out);
}

Schedule schedule_from_json(const std::string& text, const std::string& source) {
  const Reader in(source);
  // Ops are converted as the parser finishes each one and then dropped from the DOM (the parser callback), so
  // a file of millions of ops never exists as a JSON tree. Depths: 0 document, 2 rank objects, 4 op objects.
  std::vector<Program> programs;
  std::size_t op_index = 0;
  json::parser_callback_t on_parse = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 2 && event == json::parse_event_t::object_start) {
      programs.emplace_back();
      op_index = 0;
    } else if (depth == 4 && event == json::parse_event_t::object_end && !programs.empty()) {
      const std::string of = fmt::format("ranks[{}].ops[{}]", programs.size() - 1, op_index++);
      Op op;
      op.kind = in.choice(in.member(parsed, "kind", of), of + ".kind", parse_op_kind,
                          "send, recv, recv_reduce, copy, local_reduce");
      if (is_comm(op.kind))
        op.peer = in.integer<std::int32_t>(in.member(parsed, "peer", of), of + ".peer", 0, 1 << 20);
      if (is_comm(op.kind) || parsed.contains("channel")) {
        op.channel = in.integer<std::uint16_t>(in.member(parsed, "channel", of), of + ".channel", 0, 4095);
      }
      if (reads_src(op.kind)) op.src = in.chunk(in.member(parsed, "src", of), of + ".src");
      if (writes_dst(op.kind)) op.dst = in.chunk(in.member(parsed, "dst", of), of + ".dst");
      std::vector<OpId> deps;
      if (parsed.contains("deps")) {
        const json& dj = parsed["deps"];
        if (!dj.is_array()) in.fail(of + ".deps", "expected an array of op indices");
        for (std::size_t d = 0; d < dj.size(); ++d)
          deps.push_back(in.integer<OpId>(dj[d], fmt::format("{}.deps[{}]", of, d), 0, 1u << 31));
      }
      programs.back().add(op, deps);
      return false;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, on_parse);
  } catch (const json::parse_error& e) {
    // The parser quotes the token it stopped in, which can be the rest of the file (an unclosed string:
    // found by the schedule fuzzer), hence the clip.
    throw ConfigError(fmt::format("{}: not valid JSON (byte {}): {}", source, e.byte, clip(e.what(), 300)));
  } catch (const json::exception& e) {  // a number too large for any type (found by the schedule fuzzer)
    throw ConfigError(fmt::format("{}: not valid JSON: {}", source, clip(e.what(), 300)));
  }
  Schedule s;
  s.spec.collective =
      in.choice(in.member(doc, "collective", ""), "collective", parse_collective, kCollectiveNames);
  s.algorithm = in.text(in.member(doc, "algorithm", ""), "algorithm");
  s.spec.world_size = in.integer<int>(in.member(doc, "world_size", ""), "world_size", 1, 1 << 20);
  s.spec.count = in.integer<std::uint64_t>(in.member(doc, "count", ""), "count", 0, UINT64_MAX / 2);
  if (doc.contains("dtype")) s.spec.dtype = in.choice(doc["dtype"], "dtype", parse_dtype, kDTypeNames);
  if (doc.contains("op")) s.spec.op = in.choice(doc["op"], "op", parse_reduce_op, kReduceOpNames);
  if (doc.contains("root")) s.spec.root = in.integer<int>(doc["root"], "root", 0, s.spec.world_size - 1);
  if (doc.contains("params")) {
    if (!doc["params"].is_object()) in.fail("params", "expected an object");
    for (auto& [k, v] : doc["params"].items())
      s.params[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  const json& ranks = in.member(doc, "ranks", "");
  if (!ranks.is_array()) in.fail("ranks", "expected an array");
  if (ranks.size() != static_cast<std::size_t>(s.spec.world_size) || programs.size() != ranks.size()) {
    in.fail("ranks", fmt::format("has {} entries for world_size {}", ranks.size(), s.spec.world_size));
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const std::string rf = fmt::format("ranks[{}]", i);
    const json& rj = ranks[i];
    const int rank = in.integer<int>(in.member(rj, "rank", rf), rf + ".rank", 0, s.spec.world_size - 1);
    if (rank != static_cast<int>(i))
      in.fail(rf + ".rank", fmt::format("is {}, expected {} (ranks in order)", rank, i));
    if (!rj.contains("ops")) in.fail(rf + ".ops", "missing required field");
    if (rj.contains("scratch")) {
      programs[i].scratch_count =
          in.integer<std::uint64_t>(rj["scratch"], rf + ".scratch", 0, UINT64_MAX / 2);
    }
    const Program& p = programs[i];
    for (std::size_t k = 0; k < p.ops.size(); ++k) {
      const Op& op = p.ops[k];
      if (is_comm(op.kind) && op.peer >= s.spec.world_size) {
        in.fail(fmt::format("{}.ops[{}].peer", rf, k),
                fmt::format("{} is not a rank of 0..{}", op.peer, s.spec.world_size - 1));
      }
      for (OpId d : p.deps_of(op))
        if (d >= p.ops.size())
          in.fail(fmt::format("{}.ops[{}].deps", rf, k), fmt::format("op {} does not exist", d));
    }
  }
  s.ranks = std::move(programs);
  return s;
}

Schedule load_schedule_file(const std::string& path) {
  return schedule_from_json(read_input_file(path, "schedule"), path);
}

void save_schedule_file(const Schedule& schedule, const std::string& path) {
  // Write to a temporary name and rename, so a failed write never leaves a half file under the real name.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw ConfigError(fmt::format("{}: cannot write schedule file", path));
    out << schedule_to_json(schedule);
    if (!out) throw ConfigError(fmt::format("{}: write failed", path));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace cclab
