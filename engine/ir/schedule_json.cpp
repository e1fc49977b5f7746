#include "engine/ir/schedule_json.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
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
    if (value.is_number_unsigned()) {  // what JSON reads as unsigned is >= 0, which may still be < min_value
      const auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(max_value))
        fail(field, fmt::format("{} is larger than {}", v, max_value));
      if (min_value > 0 && v < static_cast<std::uint64_t>(min_value))
        fail(field, fmt::format("{} is smaller than {}", v, min_value));
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
      if (has_peer(op.kind)) fmt::format_to(fmt::appender(out), ",\"peer\":{}", op.peer);
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
                          "send, recv, recv_reduce, copy, local_reduce, switch_reduce, switch_store");
      if (has_peer(op.kind))
        op.peer = in.integer<std::int32_t>(in.member(parsed, "peer", of), of + ".peer", 0, 1 << 20);
      if (has_peer(op.kind) || parsed.contains("channel")) {
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
    // The two parameters a consumer needs (the α-β model's link split and rate split), typed here once.
    auto typed = [&](const char* key, int most, int& out) {
      const auto it = s.params.find(key);
      if (it == s.params.end()) return;
      int value = 0;
      const auto [end, error] =
          std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
      if (error != std::errc() || end != it->second.data() + it->second.size() || value < 1 || value > most)
        in.fail(fmt::format("params.{}", key),
                fmt::format("'{}' is not an integer in [1, {}]", it->second, most));
      out = value;
    };
    typed("lanes", 64, s.lanes_per_channel);
    typed("channels", 65535, s.network_channels);
    typed("kernels", 64, s.kernels);
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
      if (has_peer(op.kind) && op.peer >= s.spec.world_size) {
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

namespace {

// Write to a temporary name and rename, so a failed write never leaves a half file under the real name.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw ConfigError(fmt::format("{}: cannot write schedule file", path));
    out << text;
    if (!out) throw ConfigError(fmt::format("{}: write failed", path));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

void save_schedule_file(const Schedule& schedule, const std::string& path) {
  write_atomically(path, schedule_to_json(schedule));
}

// --- The compact form. ---

namespace {

json role_json(const RolePlace& r) {
  return json::array({std::string(to_string(r.buffer)), r.own_block_relative});
}
json place_json(const BufferPlace& p) {
  return json::array({std::string(to_string(p.buffer)), p.offset, p.member_blocks, p.blocks_of});
}

json spec_json(const CollectiveSpec& spec, const std::string& algorithm) {
  json doc;
  doc["collective"] = std::string(to_string(spec.collective));
  doc["algorithm"] = algorithm;
  doc["world_size"] = spec.world_size;
  doc["count"] = spec.count;
  doc["dtype"] = std::string(to_string(spec.dtype));
  doc["op"] = std::string(to_string(spec.op));
  doc["root"] = spec.root;
  return doc;
}

// One pass of the compact file: its kind and its fields.
std::string pass_json(const Pass& pass) {
  const auto trees_parents = [](const std::vector<Tree>& trees) {
    json parents = json::array();
    for (const Tree& t : trees)
      parents.push_back(t.parent);
    return parents;
  };
  return std::visit(PassHandlers{[](const RingPass& ring) {
                                   return json{{"kind", "ring"},
                                               {"reduce_scatter", ring.reduce_scatter},
                                               {"allgather", ring.allgather},
                                               {"count", ring.count},
                                               {"chunk_elems", ring.chunk_elems},
                                               {"scratch", ring.scratch_count},
                                               {"roles",
                                                {{"contribution", role_json(ring.contribution)},
                                                 {"partial", role_json(ring.partial)},
                                                 {"reduced", role_json(ring.reduced)},
                                                 {"gathered", role_json(ring.gathered)}}},
                                               {"rings", ring.rings}}
                                       .dump();
                                 },
                                 [&](const TreePass& tree) {
                                   return json{{"kind", "tree"},
                                               {"count", tree.count},
                                               {"chunk_elems", tree.chunk_elems},
                                               {"parents", trees_parents(tree.trees)}}
                                       .dump();
                                 },
                                 [&](const NvlsTreePass& nt) {
                                   return json{{"kind", "nvls_tree"},
                                               {"count", nt.count},
                                               {"round_elems", nt.round_elems},
                                               {"gpus_per_node", nt.gpus_per_node},
                                               {"node_parents", trees_parents(nt.trees)}}
                                       .dump();
                                 },
                                 [](const SharpPass& sp) {
                                   json j{{"kind", "sharp"},
                                          {"intra", sp.intra == SharpIntra::Nvls    ? "nvls"
                                                    : sp.intra == SharpIntra::Chain ? "chain"
                                                                                    : "direct"},
                                          {"count", sp.count},
                                          {"round_elems", sp.round_elems},
                                          {"gpus_per_node", sp.gpus_per_node},
                                          {"nodes", sp.nodes},
                                          {"channels", sp.channel_count}};
                                   if (sp.intra == SharpIntra::Chain) j["chains"] = sp.chains;
                                   return j.dump();
                                 },
                                 [](const NvlsPass& nv) {
                                   return json{{"kind", "nvls"},
                                               {"members", nv.member_count},
                                               {"channels", nv.channel_count},
                                               {"count", nv.count},
                                               {"round_elems", nv.round_elems},
                                               {"reduce", nv.reduce},
                                               {"store", nv.store},
                                               {"roles",
                                                {{"reduce_src", role_json(nv.reduce_src)},
                                                 {"reduce_dst", role_json(nv.reduce_dst)},
                                                 {"store_src", role_json(nv.store_src)},
                                                 {"store_dst", role_json(nv.store_dst)}}}}
                                       .dump();
                                 },
                                 [](const ExplicitPass& x) {
                                   std::string programs = schedule_to_json(x.programs);
                                   while (!programs.empty() && programs.back() == '\n')
                                     programs.pop_back();
                                   return "{\"kind\":\"explicit\",\"schedule\":" + programs + "}";
                                 }},
                    pass);
}

}  // namespace

bool is_compact_json(std::string_view text) {
  // The writer puts "form" first; a reader of the explicit form never sees the key.
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text[start] != '{') return false;
  const auto key = text.find_first_not_of(" \t\r\n", start + 1);
  return key != std::string_view::npos && text.substr(key, 6) == "\"form\"";
}

std::string compact_to_json(const CompactSchedule& s) {
  // Ring and tree passes are small (O(C·P)) and go through the DOM; explicit passes are written by the
  // explicit writer, whose output can be millions of ops.
  std::vector<const Pass*> passes;
  std::map<const Pass*, std::size_t> index;
  for (const Phase& phase : s.phases())
    for (const Lane& lane : phase.lanes)
      if (index.emplace(lane.pass.get(), passes.size()).second) passes.push_back(lane.pass.get());
  json head = spec_json(s.spec, s.algorithm);
  json params;
  params["chunk"] = s.params.chunk_bytes;
  if (s.params.channels) params["channels"] = *s.params.channels;
  params["lanes_per_channel"] = s.params.lanes_per_channel;
  if (s.params.inter) params["inter"] = *s.params.inter;
  if (s.params.kernels != 1) params["kernels"] = s.params.kernels;
  head["params"] = params;
  json phases = json::array();
  for (const Phase& phase : s.phases()) {
    json lanes = json::array();
    for (const Lane& lane : phase.lanes)
      lanes.push_back({{"pass", index.at(lane.pass.get())},
                       {"ranks", lane.ranks},
                       {"input", place_json(lane.input)},
                       {"output", place_json(lane.output)}});
    phases.push_back(lanes);
  }
  std::string out = "{\"form\":\"compact\",";
  const std::string h = head.dump();
  out += h.substr(1, h.size() - 2);  // the spec's fields, without braces
  out += ",\n\"passes\":[";
  for (std::size_t i = 0; i < passes.size(); ++i) {
    if (i) out += ",\n";
    out += pass_json(*passes[i]);
  }
  out += "],\n\"phases\":" + phases.dump() + "}\n";
  return out;
}

CompactSchedule compact_from_json(const std::string& text, const std::string& source) {
  const Reader in(source);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ConfigError(fmt::format("{}: not valid JSON (byte {}): {}", source, e.byte, clip(e.what(), 300)));
  } catch (const json::exception& e) {
    throw ConfigError(fmt::format("{}: not valid JSON: {}", source, clip(e.what(), 300)));
  }
  if (in.text(in.member(doc, "form", ""), "form") != "compact")
    in.fail("form", "expected \"compact\" (an explicit schedule has no \"form\")");
  CollectiveSpec spec;
  spec.collective =
      in.choice(in.member(doc, "collective", ""), "collective", parse_collective, kCollectiveNames);
  const std::string algorithm = in.text(in.member(doc, "algorithm", ""), "algorithm");
  spec.world_size = in.integer<int>(in.member(doc, "world_size", ""), "world_size", 1, 1 << 20);
  spec.count = in.integer<std::uint64_t>(in.member(doc, "count", ""), "count", 0, UINT64_MAX / 2);
  if (doc.contains("dtype")) spec.dtype = in.choice(doc["dtype"], "dtype", parse_dtype, kDTypeNames);
  if (doc.contains("op")) spec.op = in.choice(doc["op"], "op", parse_reduce_op, kReduceOpNames);
  if (doc.contains("root")) spec.root = in.integer<int>(doc["root"], "root", 0, spec.world_size - 1);
  CompactSchedule s(spec, algorithm);
  if (doc.contains("params")) {
    const json& p = doc["params"];
    if (!p.is_object()) in.fail("params", "expected an object");
    if (p.contains("chunk"))
      s.params.chunk_bytes = in.integer<std::uint64_t>(p["chunk"], "params.chunk", 0, UINT64_MAX / 2);
    if (p.contains("channels"))
      s.params.channels = in.integer<int>(p["channels"], "params.channels", 1, 4096);
    if (p.contains("lanes_per_channel"))
      s.params.lanes_per_channel = in.integer<int>(p["lanes_per_channel"], "params.lanes_per_channel", 1, 64);
    if (p.contains("inter")) s.params.inter = in.text(p["inter"], "params.inter");
    if (p.contains("kernels")) s.params.kernels = in.integer<int>(p["kernels"], "params.kernels", 1, 64);
  }
  auto boolean = [&](const json& v, const std::string& field) {
    if (!v.is_boolean()) in.fail(field, fmt::format("expected true or false, got {}", v.dump()));
    return v.get<bool>();
  };
  auto members_list = [&](const json& v, const std::string& field, int n, int low) {
    if (!v.is_array() || v.size() != static_cast<std::size_t>(n))
      in.fail(field, fmt::format("expected an array of {} members", n));
    std::vector<int> out;
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(in.integer<int>(v[i], fmt::format("{}[{}]", field, i), low, n - 1));
    return out;
  };
  // A pass's "roles": each named role as [buffer, own_block].
  auto read_roles = [&](const json& pj, const std::string& pf,
                        std::initializer_list<std::pair<const char*, RolePlace*>> wanted) {
    const json& roles = in.member(pj, "roles", pf);
    for (auto [name, role] : wanted) {
      const std::string rf = fmt::format("{}.roles.{}", pf, name);
      const json& r = in.member(roles, name, pf + ".roles");
      if (!r.is_array() || r.size() != 2) in.fail(rf, "expected [\"input|output|scratch\", own_block]");
      role->buffer = in.choice(r[0], rf + "[0]", parse_buffer, "input, output, scratch");
      role->own_block_relative = boolean(r[1], rf + "[1]");
    }
  };
  const json& pass_list = in.member(doc, "passes", "");
  if (!pass_list.is_array()) in.fail("passes", "expected an array");
  std::vector<std::shared_ptr<const Pass>> passes;
  for (std::size_t i = 0; i < pass_list.size(); ++i) {
    const std::string pf = fmt::format("passes[{}]", i);
    const json& pj = pass_list[i];
    const std::string kind = in.text(in.member(pj, "kind", pf), pf + ".kind");
    if (kind == "ring") {
      const json& rings = in.member(pj, "rings", pf);
      if (!rings.is_array() || rings.empty() || rings.size() > 4096 || !rings[0].is_array() ||
          rings[0].empty())
        in.fail(pf + ".rings", "expected 1 to 4096 non-empty rings of member indices");
      const int n = static_cast<int>(std::min<std::size_t>(rings[0].size(), 1 << 20));
      std::vector<std::vector<int>> order;
      for (std::size_t c = 0; c < rings.size(); ++c) {
        const std::string rf = fmt::format("{}.rings[{}]", pf, c);
        order.push_back(members_list(rings[c], rf, n, 0));
        std::vector<std::uint8_t> seen(n, 0);
        for (int m : order.back())
          if (seen[m]++) in.fail(rf, fmt::format("member {} appears twice: a ring is a permutation", m));
      }
      RingPass ring;
      ring.reduce_scatter = boolean(in.member(pj, "reduce_scatter", pf), pf + ".reduce_scatter");
      ring.allgather = boolean(in.member(pj, "allgather", pf), pf + ".allgather");
      ring.count = in.integer<std::uint64_t>(in.member(pj, "count", pf), pf + ".count", 0, UINT64_MAX / 2);
      ring.chunk_elems =
          in.integer<std::uint64_t>(in.member(pj, "chunk_elems", pf), pf + ".chunk_elems", 0, UINT64_MAX / 2);
      if (pj.contains("scratch"))
        ring.scratch_count = in.integer<std::uint64_t>(pj["scratch"], pf + ".scratch", 0, UINT64_MAX / 2);
      read_roles(pj, pf,
                 {std::pair{"contribution", &ring.contribution}, std::pair{"partial", &ring.partial},
                  std::pair{"reduced", &ring.reduced}, std::pair{"gathered", &ring.gathered}});
      ring.rings = std::move(order);
      ring.position.assign(ring.rings.size(), std::vector<int>(n));
      for (std::size_t c = 0; c < ring.rings.size(); ++c)
        for (int p = 0; p < n; ++p)
          ring.position[c][ring.rings[c][p]] = p;
      passes.push_back(std::make_shared<const Pass>(std::move(ring)));
    } else if (kind == "tree") {
      const json& parents = in.member(pj, "parents", pf);
      if (!parents.is_array() || parents.empty() || parents.size() > 4096 || !parents[0].is_array() ||
          parents[0].empty())
        in.fail(pf + ".parents", "expected 1 to 4096 non-empty parent arrays (-1 at the root)");
      const int n = static_cast<int>(std::min<std::size_t>(parents[0].size(), 1 << 20));
      TreePass tree;
      tree.count = in.integer<std::uint64_t>(in.member(pj, "count", pf), pf + ".count", 0, UINT64_MAX / 2);
      tree.chunk_elems =
          in.integer<std::uint64_t>(in.member(pj, "chunk_elems", pf), pf + ".chunk_elems", 0, UINT64_MAX / 2);
      for (std::size_t c = 0; c < parents.size(); ++c)
        tree.trees.push_back(
            tree_from_parents(members_list(parents[c], fmt::format("{}.parents[{}]", pf, c), n, -1)));
      passes.push_back(std::make_shared<const Pass>(std::move(tree)));
    } else if (kind == "nvls_tree") {
      const json& parents = in.member(pj, "node_parents", pf);
      if (!parents.is_array() || parents.empty() || parents.size() > 4096 || !parents[0].is_array() ||
          parents[0].empty())
        in.fail(pf + ".node_parents",
                "expected 1 to 4096 non-empty parent arrays over the nodes (-1 at the root)");
      const int nodes = static_cast<int>(std::min<std::size_t>(parents[0].size(), 1 << 20));
      NvlsTreePass nt;
      nt.count = in.integer<std::uint64_t>(in.member(pj, "count", pf), pf + ".count", 0, UINT64_MAX / 2);
      nt.round_elems =
          in.integer<std::uint64_t>(in.member(pj, "round_elems", pf), pf + ".round_elems", 0, UINT64_MAX / 2);
      nt.gpus_per_node =
          in.integer<int>(in.member(pj, "gpus_per_node", pf), pf + ".gpus_per_node", 1, (1 << 20) / nodes);
      for (std::size_t c = 0; c < parents.size(); ++c)
        nt.trees.push_back(tree_from_parents(
            members_list(parents[c], fmt::format("{}.node_parents[{}]", pf, c), nodes, -1)));
      passes.push_back(std::make_shared<const Pass>(std::move(nt)));
    } else if (kind == "sharp") {
      SharpPass sp;
      sp.intra = in.choice(
          in.member(pj, "intra", pf), pf + ".intra",
          [](std::string_view name) -> std::optional<SharpIntra> {
            if (name == "direct") return SharpIntra::Direct;
            if (name == "nvls") return SharpIntra::Nvls;
            if (name == "chain") return SharpIntra::Chain;
            return std::nullopt;
          },
          "direct, nvls, chain");
      sp.count = in.integer<std::uint64_t>(in.member(pj, "count", pf), pf + ".count", 0, UINT64_MAX / 2);
      sp.round_elems =
          in.integer<std::uint64_t>(in.member(pj, "round_elems", pf), pf + ".round_elems", 0, UINT64_MAX / 2);
      sp.nodes = in.integer<int>(in.member(pj, "nodes", pf), pf + ".nodes", 1, 1 << 20);
      sp.gpus_per_node =
          in.integer<int>(in.member(pj, "gpus_per_node", pf), pf + ".gpus_per_node", 1, (1 << 20) / sp.nodes);
      sp.channel_count = in.integer<int>(in.member(pj, "channels", pf), pf + ".channels", 1, 65535);
      if (sp.intra == SharpIntra::Chain) {  // per channel, the node's local ranks from the head down
        const json& chains = in.member(pj, "chains", pf);
        if (!chains.is_array() || chains.size() != static_cast<std::size_t>(sp.channel_count))
          in.fail(pf + ".chains", fmt::format("expected {} chains, one per channel", sp.channel_count));
        for (std::size_t c = 0; c < chains.size(); ++c) {
          const std::string cf = fmt::format("{}.chains[{}]", pf, c);
          sp.chains.push_back(members_list(chains[c], cf, sp.gpus_per_node, 0));
          std::vector<std::uint8_t> seen(sp.gpus_per_node, 0);
          for (int m : sp.chains.back())
            if (seen[m]++)
              in.fail(cf, fmt::format("local rank {} appears twice: a chain is a permutation", m));
        }
      }
      passes.push_back(std::make_shared<const Pass>(std::move(sp)));
    } else if (kind == "nvls") {
      NvlsPass nv;
      nv.member_count = in.integer<int>(in.member(pj, "members", pf), pf + ".members", 1, 1 << 20);
      nv.channel_count = in.integer<int>(in.member(pj, "channels", pf), pf + ".channels", 1, 65535);
      nv.count = in.integer<std::uint64_t>(in.member(pj, "count", pf), pf + ".count", 0, UINT64_MAX / 2);
      nv.round_elems =
          in.integer<std::uint64_t>(in.member(pj, "round_elems", pf), pf + ".round_elems", 0, UINT64_MAX / 2);
      nv.reduce = boolean(in.member(pj, "reduce", pf), pf + ".reduce");
      nv.store = boolean(in.member(pj, "store", pf), pf + ".store");
      read_roles(pj, pf,
                 {std::pair{"reduce_src", &nv.reduce_src}, std::pair{"reduce_dst", &nv.reduce_dst},
                  std::pair{"store_src", &nv.store_src}, std::pair{"store_dst", &nv.store_dst}});
      passes.push_back(std::make_shared<const Pass>(std::move(nv)));
    } else if (kind == "explicit") {
      passes.push_back(std::make_shared<const Pass>(ExplicitPass{
          schedule_from_json(in.member(pj, "schedule", pf).dump(), source + ": " + pf + ".schedule")}));
    } else {
      in.fail(pf + ".kind",
              fmt::format("unknown value '{}' (valid: ring, tree, nvls_tree, sharp, nvls, explicit)", kind));
    }
  }
  auto place = [&](const json& v, const std::string& field) {
    if (!v.is_array() || v.size() != 4)
      in.fail(field, "expected [\"input|output\", offset, member_blocks, blocks_of]");
    BufferPlace p;
    p.buffer = in.choice(v[0], field + "[0]", parse_buffer, "input, output");
    p.offset = in.integer<std::uint64_t>(v[1], field + "[1]", 0, UINT64_MAX / 4);
    p.member_blocks = in.integer<int>(v[2], field + "[2]", 0, 1 << 20);
    p.blocks_of = in.integer<std::uint64_t>(v[3], field + "[3]", 0, UINT64_MAX / 4);
    return p;
  };
  const json& phases = in.member(doc, "phases", "");
  if (!phases.is_array()) in.fail("phases", "expected an array of phases, each an array of lanes");
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (!phases[p].is_array()) in.fail(fmt::format("phases[{}]", p), "expected an array of lanes");
    s.next_phase();
    for (std::size_t l = 0; l < phases[p].size(); ++l) {
      const std::string lf = fmt::format("phases[{}][{}]", p, l);
      const json& lj = phases[p][l];
      const std::size_t pass = in.integer<std::size_t>(in.member(lj, "pass", lf), lf + ".pass", 0, 1 << 20);
      if (pass >= passes.size()) in.fail(lf + ".pass", fmt::format("pass {} does not exist", pass));
      const json& rj = in.member(lj, "ranks", lf);
      if (!rj.is_array()) in.fail(lf + ".ranks", "expected an array of ranks");
      Lane lane;
      for (std::size_t m = 0; m < rj.size(); ++m)
        lane.ranks.push_back(
            in.integer<int>(rj[m], fmt::format("{}.ranks[{}]", lf, m), 0, spec.world_size - 1));
      lane.input = place(in.member(lj, "input", lf), lf + ".input");
      lane.output = place(in.member(lj, "output", lf), lf + ".output");
      lane.pass = passes[pass];
      try {
        s.add_lane(std::move(lane));
      } catch (const PlanError& e) {
        in.fail(lf, e.what());
      }
    }
  }
  return s;
}

CompactSchedule load_any_schedule_file(const std::string& path) {
  const std::string text = read_input_file(path, "schedule");
  if (is_compact_json(text)) return compact_from_json(text, path);
  return from_explicit(schedule_from_json(text, path));
}

void save_compact_file(const CompactSchedule& schedule, const std::string& path) {
  write_atomically(path, compact_to_json(schedule));
}

}  // namespace cclab
