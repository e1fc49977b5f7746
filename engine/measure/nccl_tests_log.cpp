#include "engine/measure/nccl_tests_log.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/files.hpp"

namespace cclab {
namespace {

// nccl-tests' names, both ways: its programs (all_reduce_perf) and its type names.
constexpr std::pair<Collective, std::string_view> kProgramNames[] = {
    {Collective::AllReduce, "all_reduce"}, {Collective::ReduceScatter, "reduce_scatter"},
    {Collective::AllGather, "all_gather"}, {Collective::Broadcast, "broadcast"},
    {Collective::Reduce, "reduce"},        {Collective::AllToAll, "alltoall"},
    {Collective::Gather, "gather"},        {Collective::Scatter, "scatter"},
    {Collective::SendRecv, "sendrecv"},    {Collective::AllGather, "hypercube"}};
// The programs that run one algorithm of their own rather than NCCL's collective (hypercube_perf: an
// allgather by recursive doubling, ncclSend/ncclRecv per step), and the planner that is that algorithm.
constexpr std::pair<std::string_view, std::string_view> kProgramAlgorithms[] = {{"hypercube", "hypercube"}};

// "build/all_reduce_perf_mpi" -> "all_reduce".
std::string_view program_stem(std::string_view program) {
  if (const auto slash = program.find_last_of('/'); slash != std::string_view::npos)
    program.remove_prefix(slash + 1);
  if (program.ends_with("_mpi")) program.remove_suffix(4);
  if (program.ends_with("_perf")) program.remove_suffix(5);
  return program;
}
constexpr std::pair<DType, std::string_view> kTypeNames[] = {
    {DType::F32, "float"}, {DType::F16, "half"}, {DType::BF16, "bfloat16"}};

}  // namespace
namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
      ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
      ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <typename T>
std::optional<T> number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Where the named columns are, from a header line such as
// "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong".
struct Columns {
  int size = -1, count = -1, type = -1, redop = -1, root = -1, time = -1, algbw = -1, busbw = -1,
      in_place_time = -1;
  int needed = 0;  // tokens a data row must have to reach every column above
};

std::optional<Columns> header_columns(const std::vector<std::string_view>& names) {
  Columns c;
  int times = 0;
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    const std::string_view n = names[i];
    if (n == "size" && c.size < 0) c.size = i;
    if (n == "count" && c.count < 0) c.count = i;
    if (n == "type" && c.type < 0) c.type = i;
    if (n == "redop" && c.redop < 0) c.redop = i;
    if (n == "root" && c.root < 0) c.root = i;
    if (n == "time" || n == "cputime") {
      (times++ == 0 ? c.time : c.in_place_time) = i;
    }
    if (n == "algbw" && c.algbw < 0) c.algbw = i;
    if (n == "busbw" && c.busbw < 0) c.busbw = i;
  }
  if (c.size < 0 || c.count < 0 || c.type < 0 || c.time < 0 || c.algbw < 0 || c.busbw < 0)
    return std::nullopt;
  // The in-place group is optional: some logs (trimmed by hand, or older builds) have out-of-place only.
  c.needed = 1 + std::max({c.size, c.count, c.type, c.redop, c.root, c.time, c.algbw, c.busbw});
  return c;
}

// Bytes per element of nccl-tests' type names; 0 for a name it does not know.
std::uint64_t nccl_type_bytes(std::string_view type) {
  for (const std::string_view one : {"int8", "uint8", "fp8_e4m3", "fp8_e5m2"})
    if (type == one) return 1;
  if (type == "half" || type == "bfloat16") return 2;
  if (type == "float" || type == "int32" || type == "uint32") return 4;
  if (type == "double" || type == "int64" || type == "uint64") return 8;
  return 0;
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// A line as nccl-tests printed it, without what the launcher put in front: Open MPI's --tag-output
// ("[1,0]<stdout>:"), MPICH's and Intel MPI's -l and similar wrappers ("[0] "), Slurm's srun --label ("0: ").
// NCCL's own lines ("host:pid:tid [0] NCCL INFO ...") start with neither and stay as they are.
std::string_view without_launcher_prefix(std::string_view line) {
  for (int layer = 0; layer < 2; ++layer) {  // srun --label around a tagged mpirun, at most
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ')
      ++i;
    const std::string_view rest = line.substr(i);
    if (rest.starts_with('[')) {
      const auto close = rest.find(']');
      if (close == std::string_view::npos) break;
      const std::string_view inside = rest.substr(1, close - 1);
      const auto comma = inside.find(',');
      std::string_view after = rest.substr(close + 1);
      if (comma != std::string_view::npos && all_digits(inside.substr(0, comma)) &&
          all_digits(inside.substr(comma + 1))) {
        // Open MPI: "[job,rank]<stdout>:" (or <stderr>, <stddiag>).
        if (!after.starts_with('<')) break;
        const auto colon = after.find(">:");
        if (colon == std::string_view::npos) break;
        line = after.substr(colon + 2);
        continue;
      }
      if (!all_digits(inside)) break;
      line = after;
      continue;
    }
    const auto colon = rest.find(": ");
    if (colon != std::string_view::npos && all_digits(rest.substr(0, colon))) {
      line = rest.substr(colon + 2);
      continue;
    }
    break;
  }
  return line;
}

// A launcher that labels every write, not every line, also labels the pieces of a row that nccl-tests
// prints with separate printf calls ("1048576  262144  float  sum  -1[0]  1626.5 ..."): the labels go.
std::string without_rank_labels(std::string_view row) {
  std::string out;
  out.reserve(row.size());
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '[') {
      const auto close = row.find(']', i);
      if (close != std::string_view::npos && all_digits(row.substr(i + 1, close - i - 1))) {
        out += ' ';
        i = close;
        continue;
      }
    }
    out += row[i];
  }
  return out;
}

}  // namespace

std::optional<Collective> collective_of_program(std::string_view program) {
  program = program_stem(program);
  for (const auto& [collective, name] : kProgramNames)
    if (program == name) return collective;
  return std::nullopt;
}

std::string_view algorithm_of_program(std::string_view program) {
  program = program_stem(program);
  for (const auto& [name, algorithm] : kProgramAlgorithms)
    if (program == name) return algorithm;
  return {};
}

std::optional<DType> dtype_of_nccl_type(std::string_view type) {
  for (const auto& [dtype, name] : kTypeNames)
    if (type == name) return dtype;
  return std::nullopt;
}

namespace {

// NCCL's tuner line ("... 1048576 Bytes -> Algo RING proto LL128 ..." or "... Algo 1 proto 2 ...") into
// `tuned`; other lines leave it alone.
void read_tuner_line(std::string_view line, std::map<std::uint64_t, NcclTuned>& tuned) {
  constexpr std::string_view kMarker = " Bytes -> Algo ";
  const auto at = line.find(kMarker);
  if (at == std::string_view::npos) return;
  const auto before = words(line.substr(0, at));
  const auto after = words(line.substr(at + kMarker.size()));
  if (before.empty() || after.size() < 3 || after[1] != "proto") return;
  const auto bytes = number<std::uint64_t>(before.back());
  if (!bytes) return;
  auto canonical = [](std::string_view token, const std::vector<std::string_view>& names) -> std::string {
    if (const auto index = number<std::size_t>(token))
      return *index < names.size() ? std::string(names[*index]) : "";
    std::string folded = ascii_lowercase(token);  // NVLS_TREE, NVLSTree and nvlstree alike
    std::erase(folded, '_');
    if (folded == "collnet") folded = "collnetdirect";  // NCCL's name before CollNetChain existed
    for (const std::string_view name : names)
      if (ascii_lowercase(name) == folded) return std::string(name);
    return "";
  };
  NcclTuned t{
      canonical(after[0], {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}),
      canonical(after[2], {"LL", "LL128", "Simple"}), 0};
  // The channels it ran on: "channel{Lo..Hi}={0..15}".
  constexpr std::string_view kChannels = "channel{Lo..Hi}={";
  if (const auto c = line.find(kChannels); c != std::string_view::npos) {
    const std::string_view range = line.substr(c + kChannels.size());
    const auto dots = range.find("..");
    const auto close = range.find('}');
    if (dots != std::string_view::npos && close != std::string_view::npos && dots < close) {
      const auto lo = number<int>(range.substr(0, dots));
      const auto hi = number<int>(range.substr(dots + 2, close - dots - 2));
      if (lo && hi && *hi >= *lo && *lo >= 0) t.channels = *hi - *lo + 1;
    }
  }
  if (!t.algorithm.empty() && !t.protocol.empty()) tuned.try_emplace(*bytes, std::move(t));
}

// The NCCL version a line states, as NCCL_VERSION_CODE; 0 where it states none. NCCL's "NCCL version
// 2.18.3+cuda12.2" (every NCCL prints it at init), nccl-tests' "nccl-library=21803" (from 2.9 the code is
// major·10000 + minor·100 + patch; before, major·1000 + minor·100 + patch: 2708 for 2.7.8).
int nccl_version_of_line(std::string_view line) {
  constexpr std::string_view kVersion = "NCCL version ";
  if (const auto at = line.find(kVersion); at != std::string_view::npos) {
    // Up to three dot-separated numbers, each under 100 (NCCL's code has two digits for minor and patch).
    std::string_view text = line.substr(at + kVersion.size());
    int code = 0, parts = 0;
    for (; parts < 3; ++parts) {
      std::size_t digits = 0;
      while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
      const auto value = number<int>(text.substr(0, digits));
      if (!value || *value > 99) break;
      code = code * 100 + *value;
      text.remove_prefix(digits);
      if (parts < 2 && !text.starts_with('.')) {
        ++parts;
        break;
      }
      if (parts < 2) text.remove_prefix(1);
    }
    if (parts < 2) return 0;  // not "major.minor" at least
    for (int missing = parts; missing < 3; ++missing)
      code *= 100;
    return code;
  }
  constexpr std::string_view kLibrary = "nccl-library=";
  if (const auto at = line.find(kLibrary); at != std::string_view::npos) {
    const auto code = words(line.substr(at + kLibrary.size()));
    if (code.empty()) return 0;
    const auto value = number<int>(code[0]);
    if (!value || *value <= 0 || *value > 999999) return 0;
    if (*value < 10000) return (*value / 1000) * 10000 + (*value % 1000 / 100) * 100 + *value % 100;
    return *value;
  }
  return 0;
}

// NCCL's lines that say which network it uses (NcclTestsLog::network and the fields beside it); the first of
// each is kept, as every rank prints them.
void read_network_lines(std::string_view line, NcclTestsLog& log) {
  constexpr std::string_view kNetwork = "NCCL INFO Using network ";
  if (const auto at = line.find(kNetwork); at != std::string_view::npos && log.network.empty()) {
    std::string_view name = line.substr(at + kNetwork.size());
    while (!name.empty() && (name.back() == ' ' || name.back() == '\r'))
      name.remove_suffix(1);
    log.network = std::string(name);
  }
  // " [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE": the word after each device's last '/'.
  constexpr std::string_view kIb = "NET/IB : Using";
  if (const auto at = line.find(kIb); at != std::string_view::npos && log.ib_link_layer.empty()) {
    std::string layers;
    for (const std::string_view device : words(line.substr(at + kIb.size()))) {
      if (!device.starts_with('[')) continue;
      const auto slash = device.find_last_of('/');
      if (slash == std::string_view::npos) continue;
      const std::string_view layer = device.substr(slash + 1);
      if (layers.empty()) {
        layers = std::string(layer);
      } else if (layers != layer) {
        layers = "mixed";
      }
    }
    log.ib_link_layer = layers;
  }
  // aws-ofi-nccl: "NET/OFI Selected Provider is efa" (older), "NET/OFI Selected provider is efa, fabric is
  // efa-direct" (newer).
  for (const std::string_view marker : {"NET/OFI Selected Provider is ", "NET/OFI Selected provider is "}) {
    if (const auto at = line.find(marker); at != std::string_view::npos && log.ofi_provider.empty()) {
      const auto name = words(line.substr(at + marker.size()));
      if (!name.empty()) {
        std::string_view provider = name[0];
        if (provider.ends_with(',')) provider.remove_suffix(1);
        log.ofi_provider = std::string(provider);
      }
    }
  }
}

}  // namespace

std::optional<topo::LinkKind> network_kind_of_log(const NcclTestsLog& log) {
  if (log.network == "Socket") return topo::LinkKind::Tcp;
  if (log.network == "IB" || (log.network.empty() && !log.ib_link_layer.empty())) {
    if (log.ib_link_layer == "RoCE") return topo::LinkKind::Ethernet;
    if (log.ib_link_layer == "IB" || log.ib_link_layer.empty()) return topo::LinkKind::InfiniBand;
    return std::nullopt;  // mixed or unspecified link layers
  }
  if (log.ofi_provider == "efa" || log.network.find("AWS") != std::string::npos) return topo::LinkKind::Efa;
  return std::nullopt;
}

NcclTestsLog parse_nccl_tests_text(std::string_view text, const std::string& source) {
  NcclTestsLog log;
  log.source = source;
  std::optional<Columns> columns;
  std::istringstream in{std::string(text)};
  std::string raw;
  int line_no = 0;
  bool rows_are_allreduce = true;
  int highest_rank = -1;  // of the device lines, for a log that lists only some of them
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string_view body = without_launcher_prefix(raw);
    std::string line(body);
    auto w = words(line);
    if (w.empty()) continue;
    if (!w[0].starts_with("#") && line.find('[') != std::string::npos && number<std::uint64_t>(w[0])) {
      line = without_rank_labels(line);
      w = words(line);
    }
    read_tuner_line(line, log.tuned);
    // NCCL's own INFO line for a variable the run set ("... NCCL INFO NCCL_ALGO set by environment to Ring",
    // "NCCL_NVLS_ENABLE set by environment to 0." for numbers: src/misc/param.cc); every rank prints it, the
    // first is kept.
    constexpr std::string_view kSet = " set by environment to ";
    if (const auto at = line.find(kSet); at != std::string::npos) {
      const auto before = words(std::string_view(line).substr(0, at));
      const auto value = words(std::string_view(line).substr(at + kSet.size()));
      if (!before.empty() && before.back().starts_with("NCCL_") && !value.empty()) {
        std::string_view v = value[0];
        if (v.size() > 1 && v.ends_with('.') && number<long long>(v.substr(0, v.size() - 1)))
          v.remove_suffix(1);
        log.nccl_env.try_emplace(std::string(before.back()), std::string(v));
      }
    }
    for (auto [name, into] :
         {std::pair{"NCCL_ALGO", &log.nccl_algo}, std::pair{"NCCL_PROTO", &log.nccl_proto}}) {
      if (const auto it = log.nccl_env.find(name); it != log.nccl_env.end() && into->empty())
        *into = it->second;
    }
    read_network_lines(line, log);
    if (log.nccl_version_code == 0) log.nccl_version_code = nccl_version_of_line(line);
    if (w[0].starts_with("#")) {
      std::vector<std::string_view> rest(w.begin(), w.end());
      if (rest[0] == "#") {
        rest.erase(rest.begin());
      } else {
        rest[0].remove_prefix(1);
      }
      if (rest.size() >= 4 && rest[0] == "nThread" && rest[2] == "nGpus" && log.gpus_per_thread == 0) {
        if (const auto g = number<int>(rest[3]); g && *g > 0) log.gpus_per_thread = *g;
        const auto graph = std::find(rest.begin(), rest.end(), "graph:");
        if (graph != rest.end() && graph + 1 != rest.end())
          if (const auto n = number<int>(*(graph + 1)); n && *n > 0) log.graph_iterations = *n;
      }
      if (rest.size() >= 4 && rest[0] == "Collective" && rest[1] == "test" && rest[2] == "starting:") {
        log.program = std::string(rest[3]);
        log.collective = collective_of_program(rest[3]);
      } else if (const auto rank =
                     rest.size() >= 2 && rest[0] == "Rank" ? number<int>(rest[1]) : std::nullopt;
                 rank && *rank >= 0) {
        ++log.ranks;
        highest_rank = std::max(highest_rank, *rank);
        // "... on HOST device N [BUS] GPU NAME": the word after "on", and what follows the bus id.
        std::string host, gpu;
        const auto on = std::find(rest.begin(), rest.end(), "on");
        if (on != rest.end() && on + 1 != rest.end()) host = std::string(*(on + 1));
        if (const auto bus = line.find("] "); bus != std::string::npos && line.find("device") < bus) {
          const auto name = words(std::string_view(line).substr(bus + 2));
          if (!name.empty()) gpu.assign(name.front().data(), name.back().data() + name.back().size());
        }
        log.hosts.push_back(std::move(host));
        log.gpus.push_back(std::move(gpu));
      } else if (auto c = header_columns(rest); c && !columns) {
        columns = c;
      }
      continue;
    }
    // A data row starts with two integers (size, count); anything else (NCCL INFO lines, warnings) is not
    // one.
    if (w.size() < 3 || !number<std::uint64_t>(w[0]) || !number<std::uint64_t>(w[1])) continue;
    if (!columns) {
      throw ConfigError(fmt::format("{}:{}: a result row before the column header (# size count type ...)",
                                    source, line_no));
    }
    // nccl-tests of 2021 printed an alltoall row with its redop cell blank under a header that names the
    // column, and hypercube_perf still does: a number where the reduction's name belongs is that blank (no
    // reduction is named by a number).
    if (columns->redop >= 0 && columns->redop < static_cast<int>(w.size()) &&
        number<double>(w[columns->redop]))
      w.insert(w.begin() + columns->redop, std::string_view("none"));
    if (static_cast<int>(w.size()) < columns->needed) {
      throw ConfigError(
          fmt::format("{}:{}: {} columns, the header names {}", source, line_no, w.size(), columns->needed));
    }
    // NCCL_DEBUG=INFO output interleaved with a row (another rank's INFO line written into the middle of it)
    // leaves the row unreadable: it is passed over and said, not taken as the log's error.
    const bool interleaved =
        line.find(" NCCL INFO ") != std::string::npos || line.find(" NCCL WARN ") != std::string::npos;
    if (interleaved) {
      log.notes.push_back(
          fmt::format("line {}: a result row with NCCL's log output inside it, not read", line_no));
      continue;
    }
    NcclTestsRow row;
    row.bytes = *number<std::uint64_t>(w[columns->size]);
    row.count = *number<std::uint64_t>(w[columns->count]);
    row.type = std::string(w[columns->type]);
    row.redop = columns->redop >= 0 ? std::string(w[columns->redop]) : "none";
    if (columns->root >= 0) row.root = number<int>(w[columns->root]).value_or(-1);
    auto value = [&](int column, const char* name) {
      const auto v = number<double>(w[column]);
      if (!v || !std::isfinite(*v) || *v < 0) {
        throw ConfigError(
            fmt::format("{}:{}: {} '{}' is not a number >= 0", source, line_no, name, w[column]));
      }
      return *v;
    };
    row.time_us = value(columns->time, "time");
    row.algbw_GBps = value(columns->algbw, "algbw");
    row.busbw_GBps = value(columns->busbw, "busbw");
    if (columns->in_place_time >= 0 && columns->in_place_time < static_cast<int>(w.size())) {
      const auto in_place = number<double>(w[columns->in_place_time]);
      if (in_place && std::isfinite(*in_place) && *in_place >= 0) row.in_place_time_us = in_place;
    }
    // What the rows say of the collective, for logs that do not name it (see below).
    const std::uint64_t element_bytes = nccl_type_bytes(row.type);
    rows_are_allreduce = rows_are_allreduce && columns->root >= 0 && w[columns->root] == "-1" &&
                         columns->redop >= 0 && row.redop != "none" && element_bytes > 0 &&
                         row.count * element_bytes == row.bytes;
    log.rows.push_back(row);
  }
  if (log.rows.empty()) throw ConfigError(fmt::format("{}: no nccl-tests result rows", source));
  // Logs pasted into issues and chats often keep one device line of many ("#  Rank 71 ... device 3"): the
  // highest rank says how many there were at least, where counting the lines would say one.
  if (highest_rank + 1 > log.ranks) {
    log.notes.push_back(fmt::format("the log lists {} device line{} up to rank {}: taken as {} ranks",
                                    log.ranks, log.ranks == 1 ? "" : "s", highest_rank, highest_rank + 1));
    log.ranks = highest_rank + 1;
  }
  // A log cut from a longer one (or from an older nccl-tests) may not name its collective. Only
  // all_reduce_perf prints rows that reduce (a redop), have no root (-1) and count the whole vector (count x
  // type = size: reduce_scatter counts a rank's block, reduce and broadcast name a root), so such rows are
  // taken as allreduce, and said.
  if (!log.collective && rows_are_allreduce && log.ranks != 1) {
    log.collective = Collective::AllReduce;
    log.notes.push_back(
        "the log does not name its collective; taken as allreduce (every row reduces, has no root and counts "
        "the whole vector); give --collective otherwise");
  }
  return log;
}

NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& source) {
  NcclTestsLog log;
  log.source = source;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("{}: not JSON: {}", source, e.what()));
  }
  auto fail = [&](const std::string& what) {
    throw ConfigError(
        fmt::format("{}: {} (an nccl-tests -J file has \"results\": [{{\"size\", \"count\", "
                    "\"type\", \"out_of_place\": {{\"time\", \"alg_bw\", \"bus_bw\"}}}}, ...])",
                    source, what));
  };
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array()) fail("no \"results\" list");
  if (j.contains("args") && j["args"].is_array() && !j["args"].empty() && j["args"][0].is_string()) {
    const std::string program = j["args"][0].get<std::string>();
    log.program = program.substr(program.find_last_of('/') + 1);
    log.collective = collective_of_program(program);
  }
  // "config" {"ngpus": G, "graph": N}: how the run launched (0 where a value is missing or not a count).
  auto config_count = [&](const char* key) {
    if (!j.contains("config") || !j["config"].is_object() || !j["config"].contains(key)) return 0;
    const nlohmann::json& v = j["config"][key];
    if (!v.is_number_integer()) return 0;
    const auto n = v.get<std::int64_t>();
    return n > 0 && n <= std::numeric_limits<int>::max() ? static_cast<int>(n) : 0;
  };
  log.gpus_per_thread = config_count("ngpus");
  log.graph_iterations = config_count("graph");
  if (j.contains("devices") && j["devices"].is_array()) {
    log.ranks = static_cast<int>(j["devices"].size());
    auto text_of = [](const nlohmann::json& d, const char* key) {
      return d.is_object() && d.contains(key) && d[key].is_string() ? d[key].get<std::string>()
                                                                    : std::string();
    };
    for (const auto& d : j["devices"]) {
      log.hosts.push_back(text_of(d, "hostname"));
      log.gpus.push_back(text_of(d, "device_info"));
    }
  }
  int index = 0;
  for (const auto& r : j["results"]) {
    const std::string at = fmt::format("results[{}]", index++);
    try {
      NcclTestsRow row;
      // A JSON number may be a float of any size: converting one out of range to an integer is undefined.
      auto whole = [&](const char* key) {
        const nlohmann::json& v = r.at(key);
        if (v.is_number_unsigned()) return v.get<std::uint64_t>();
        if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
        if (v.is_number_float()) {
          const double d = v.get<double>();
          if (d >= 0 && d < 18446744073709551616.0 && d == std::floor(d))
            return static_cast<std::uint64_t>(d);
        }
        fail(fmt::format("{}: \"{}\" is not a whole number >= 0", at, key));
        return std::uint64_t{0};
      };
      row.bytes = whole("size");
      row.count = whole("count");
      row.type = r.at("type").get<std::string>();
      row.redop = r.contains("redop") && r["redop"].is_string() ? r["redop"].get<std::string>() : "";
      // hypercube_perf names no redop (an empty string), as the text table's blank cell: nothing reduced.
      if (row.redop.empty()) row.redop = "none";
      if (r.contains("root") && r["root"].is_number_integer() && r["root"].get<std::int64_t>() >= 0 &&
          r["root"].get<std::int64_t>() <= std::numeric_limits<int>::max())
        row.root = static_cast<int>(r["root"].get<std::int64_t>());
      const auto& out = r.at("out_of_place");
      if (out.is_null()) continue;  // trace replays report in place only
      row.time_us = out.contains("time") ? out.at("time").get<double>() : out.at("cpu_time").get<double>();
      row.algbw_GBps = out.at("alg_bw").get<double>();
      row.busbw_GBps = out.at("bus_bw").get<double>();
      for (double v : {row.time_us, row.algbw_GBps, row.busbw_GBps})
        if (!std::isfinite(v) || v < 0)
          fail(fmt::format("{}: a time or bandwidth that is not a number >= 0", at));
      if (r.contains("in_place") && r["in_place"].is_object() && r["in_place"].contains("time"))
        row.in_place_time_us = r["in_place"]["time"].get<double>();
      if (out.contains("iterations") && out["iterations"].is_object()) {
        const auto& it = out["iterations"];
        row.iterations = IterationTimes{it.at("min").get<double>(), it.at("p50").get<double>(),
                                        it.at("p99").get<double>()};
        for (double v : {row.iterations->min_us, row.iterations->p50_us, row.iterations->p99_us})
          if (!std::isfinite(v) || v < 0)
            fail(fmt::format("{}: an iteration time that is not a number >= 0", at));
      }
      log.rows.push_back(row);
    } catch (const nlohmann::json::exception& e) {
      fail(fmt::format("{}: {}", at, e.what()));
    }
  }
  if (log.rows.empty()) fail("no result rows");
  return log;
}

std::string nccl_tests_program(Collective collective, std::string_view algorithm) {
  for (const auto& [program, own] : kProgramAlgorithms)
    if (!algorithm.empty() && own == algorithm && collective_of_program(program) == collective)
      return std::string(program) + "_perf";
  for (const auto& [c, name] : kProgramNames)
    if (c == collective) return std::string(name) + "_perf";
  return "unknown_perf";
}

std::string nccl_tests_type(DType dtype) {
  for (const auto& [d, name] : kTypeNames)
    if (d == dtype) return std::string(name);
  return std::string(to_string(dtype));
}

std::string format_nccl_tests_json(const NcclTestsLog& log, const std::vector<std::string>& args) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  nlohmann::json argv = nlohmann::json::array();
  argv.push_back(log.program);
  for (const std::string& a : args)
    argv.push_back(a);
  j["args"] = argv;
  j["devices"] = nlohmann::json::array();
  for (int r = 0; r < log.ranks; ++r)
    j["devices"].push_back(
        {{"rank", r}, {"group", 0}, {"device", r}, {"device_info", "cclab: " + log.source}});
  nlohmann::json results = nlohmann::json::array();
  double busbw_sum = 0;
  for (const NcclTestsRow& row : log.rows) {
    nlohmann::json out{
        {"time", row.time_us}, {"alg_bw", row.algbw_GBps}, {"bus_bw", row.busbw_GBps}, {"nwrong", 0}};
    nlohmann::json in = out;
    if (row.iterations) {
      out["iterations"] = {
          {"min", row.iterations->min_us}, {"p50", row.iterations->p50_us}, {"p99", row.iterations->p99_us}};
    }
    if (row.in_place_time_us) {
      const double scale = *row.in_place_time_us > 0 ? row.time_us / *row.in_place_time_us : 0;
      in = {{"time", *row.in_place_time_us},
            {"alg_bw", row.algbw_GBps * scale},
            {"bus_bw", row.busbw_GBps * scale},
            {"nwrong", 0}};
    }
    results.push_back({{"size", row.bytes},
                       {"count", row.count},
                       {"type", row.type},
                       {"redop", row.redop},
                       {"root", row.root},
                       {"out_of_place", out},
                       {"in_place", in}});
    busbw_sum += row.busbw_GBps;
  }
  j["results"] = results;
  j["average_bus_bandwidth"] = {
      {"bandwidth", log.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(log.rows.size())}};
  return j.dump(1) + "\n";
}

std::string format_nccl_tests_csv(const NcclTestsLog& log) {
  const bool iterations = std::any_of(log.rows.begin(), log.rows.end(),
                                      [](const NcclTestsRow& r) { return r.iterations.has_value(); });
  std::string out = "size,count,type,redop,time_us,algbw_GBps,busbw_GBps";
  out += iterations ? ",time_min_us,time_p50_us,time_p99_us\n" : "\n";
  for (const NcclTestsRow& row : log.rows) {
    out += fmt::format("{},{},{},{},{:.3f},{:.3f},{:.3f}", row.bytes, row.count, row.type, row.redop,
                       row.time_us, row.algbw_GBps, row.busbw_GBps);
    if (iterations) {
      const IterationTimes t = row.iterations.value_or(IterationTimes{});
      out += row.iterations ? fmt::format(",{:.3f},{:.3f},{:.3f}", t.min_us, t.p50_us, t.p99_us) : ",,,";
    }
    out += "\n";
  }
  return out;
}

NcclTestsLog read_nccl_tests_log(const std::string& path) {
  const std::string text = read_input_file(path, "nccl-tests log");
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_nccl_tests_json(text, path);
  return parse_nccl_tests_text(text, path);
}

}  // namespace cclab
