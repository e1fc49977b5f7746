#include "engine/measure/compare.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "engine/model/nccl_tuning.hpp"
#include "engine/plan/ring_search.hpp"
#include "engine/plan/selection.hpp"

namespace cclab {

LogChoice choice_for_log(const NcclTestsLog& log, std::optional<Collective> collective,
                         std::optional<std::string> algorithm, std::optional<Protocol> protocol,
                         const std::string& fallback_algorithm, Protocol fallback_protocol) {
  LogChoice c;
  c.algorithm = algorithm.value_or(fallback_algorithm);
  c.protocol = protocol.value_or(fallback_protocol);
  if (!collective) collective = log.collective;
  // hypercube_perf runs its own allgather whatever NCCL_ALGO says (it calls ncclSend and ncclRecv only).
  const std::string_view own = algorithm_of_program(log.program);
  if (!algorithm && !own.empty()) {
    algorithm = std::string(own);
    c.algorithm = *algorithm;
    c.note += fmt::format(", {} runs the {} algorithm", log.program, own);
  }
  if (!algorithm && !log.nccl_algo.empty() && collective) {
    // The value is NCCL's name in any case ("nvls" across nodes is NCCL's NVLS there: nvls_sharp); spelled as
    // the registry spells NCCL's names, it selects what NCCL runs under it.
    std::string forced = log.nccl_algo;
    if (const std::optional<NcclAlgo> one = parse_nccl_algo(forced))
      forced = std::string(nccl_algo_name(*one));
    if (is_selection(*collective, forced)) {
      c.algorithm = forced;
      c.note += fmt::format(", NCCL_ALGO={} from the log", log.nccl_algo);
    } else {
      c.note += fmt::format(", the log's NCCL_ALGO={} is not one of NCCL's {} algorithms here: {}",
                            log.nccl_algo, to_string(*collective), c.algorithm);
    }
  }
  // The NCCL the log ran chooses among the algorithms it had (a run of NCCL 2.16 on H100 nodes had no NVLS)
  // and the run left on (NCCL_NVLS_ENABLE=0 turns NVLS and NVLSTree off, NCCL_PAT_ENABLE=0 PAT,
  // NCCL_COLLNET_ENABLE=0 CollNet).
  if (!algorithm && log.nccl_algo.empty() && c.algorithm == "nccl") {
    std::vector<std::string_view> missing;
    std::vector<std::string> why;
    if (log.nccl_version_code > 0) {
      for (const NcclAlgorithmSince& a : kNcclAlgorithms)
        if (a.since_version_code > log.nccl_version_code) missing.push_back(nccl_algo_name(a.algo));
      if (!missing.empty()) {
        why.push_back(fmt::format("NCCL {}.{}.{} from the log: without {}", log.nccl_version_code / 10000,
                                  log.nccl_version_code / 100 % 100, log.nccl_version_code % 100,
                                  fmt::join(missing, ", ")));
      }
    }
    const std::pair<std::string_view, std::vector<std::string_view>> kSwitches[] = {
        {"NCCL_NVLS_ENABLE", {"NVLS", "NVLSTree"}},
        {"NCCL_PAT_ENABLE", {"PAT"}},
        {"NCCL_COLLNET_ENABLE", {"CollNetDirect", "CollNetChain"}}};
    for (const auto& [name, names] : kSwitches) {
      const auto it = log.nccl_env.find(std::string(name));
      if (it == log.nccl_env.end() || it->second != "0") continue;
      for (const std::string_view n : names)
        if (std::find(missing.begin(), missing.end(), n) == missing.end()) missing.push_back(n);
      why.push_back(fmt::format("{}=0 from the log", name));
    }
    if (!missing.empty()) {
      c.algorithm = fmt::format("^{}", fmt::join(missing, ","));
      c.note += fmt::format(", {}", fmt::join(why, ", "));
    }
  }
  // NCCL's tuner, size by size, for what the user did not give.
  if (collective && !(algorithm && protocol)) {
    int sizes = 0, skipped = 0;
    for (const auto& [bytes, tuned] : log.tuned) {
      if (!algorithm && !is_selection(*collective, tuned.algorithm)) {
        ++skipped;  // an algorithm cclab does not plan, or not for this collective
        continue;
      }
      const auto tuned_protocol = parse_protocol(ascii_lowercase(tuned.protocol));
      // The channels NCCL ran the size on go with its own algorithm only.
      c.by_size[bytes] = {algorithm ? *algorithm : tuned.algorithm,
                          protocol ? *protocol : tuned_protocol.value_or(c.protocol),
                          algorithm ? 0 : tuned.channels};
      ++sizes;
    }
    if (sizes > 0)
      c.note += fmt::format(", NCCL's tuner choice from the log at {} size{}", sizes, sizes == 1 ? "" : "s");
    if (skipped > 0)
      c.note += fmt::format(" ({} sizes with algorithms cclab does not plan: {})", skipped, c.algorithm);
  }
  if (!protocol && !log.nccl_proto.empty()) {
    if (const auto set = nccl_protocol_set(log.nccl_proto); !set) {
      c.note += fmt::format(", the log's NCCL_PROTO={} is not NCCL's protocols: {}", log.nccl_proto,
                            to_string(c.protocol));
    } else if (std::popcount(*set) == 1) {
      c.protocol = *set == protocol_bit(Protocol::LL)      ? Protocol::LL
                   : *set == protocol_bit(Protocol::LL128) ? Protocol::LL128
                                                           : Protocol::Simple;
      c.note += fmt::format(", NCCL_PROTO={} from the log", log.nccl_proto);
    } else {
      c.auto_protocols = *set;
      c.note += fmt::format(", NCCL_PROTO={} from the log", log.nccl_proto);
    }
  }
  // LL128 came with NCCL 2.5 (NCCL_PROTO_LL128 is first defined at the 2.5.6 tag).
  if (!protocol && c.protocol == Protocol::Auto && log.nccl_version_code > 0 &&
      log.nccl_version_code < 20500 && (c.auto_protocols & protocol_bit(Protocol::LL128))) {
    c.auto_protocols &= ~protocol_bit(Protocol::LL128);
    c.note += ", no LL128 before NCCL 2.5";
  }
  return c;
}

std::optional<TunerAgreement> tuner_agreement(const NcclTestsLog& log, const topo::Topology& topology,
                                              Collective collective, const PlanOptions& options,
                                              unsigned auto_protocols) {
  if (log.tuned.empty()) return std::nullopt;
  if (collective != Collective::AllReduce && collective != Collective::Broadcast &&
      collective != Collective::Reduce)
    return std::nullopt;
  if (!planners::nccl_search(topology).comm) return std::nullopt;
  CostParams cost;
  cost.protocol = Protocol::Auto;
  cost.auto_protocols = auto_protocols;
  Selector selector(cost);
  TunerAgreement out;
  for (const auto& [bytes, tuned] : log.tuned) {
    // NCCL's estimate depends on the bytes alone: any type that divides them.
    const DType dtype = bytes % 4 == 0 ? DType::F32 : DType::F16;
    if (bytes == 0 || bytes % dtype_size_bytes(dtype) != 0) continue;
    const CollectiveSpec spec = spec_for(topology, collective, bytes / dtype_size_bytes(dtype), dtype);
    const Candidate& pick = selector.choose(spec, topology, "nccl", options);
    if (!pick.support.ok || pick.nccl_estimates.empty()) continue;
    const std::string_view nccl_name = require_algorithm(collective, pick.algorithm).nccl_name();
    const auto logged = parse_protocol(ascii_lowercase(tuned.protocol));
    ++out.sizes;
    if (ascii_lowercase(nccl_name) == ascii_lowercase(tuned.algorithm) && logged == pick.protocol) {
      ++out.agree;
      continue;
    }
    out.differences.push_back(fmt::format("{} B: the log {}/{}, cclab {}/{}", bytes, tuned.algorithm,
                                          tuned.protocol, nccl_name, nccl_protocol_name(pick.protocol)));
  }
  if (out.sizes == 0) return std::nullopt;
  return out;
}

Comparison compare_with_model(const NcclTestsLog& log, const topo::Topology& topology,
                              std::optional<Collective> collective, const std::string& algorithm,
                              const PlanOptions& options, const CostParams& cost,
                              const std::map<std::uint64_t, RowChoice>& by_size) {
  Comparison out;
  if (!collective) collective = log.collective;
  if (!collective) {
    throw ConfigError(
        fmt::format("{}: the log does not say which collective it measured{}; give --collective", log.source,
                    log.program.empty() ? "" : fmt::format(" ({})", log.program)));
  }
  out.collective = *collective;
  const int world = static_cast<int>(topology.gpus().size());
  if (log.ranks > 0 && log.ranks != world) {
    throw ConfigError(fmt::format("{}: measured on {} ranks, topology '{}' has {} GPUs", log.source,
                                  log.ranks, topology.name(), world));
  }
  out.ranks = world;
  // One selector per protocol the rows are costed with (a selector prices under one).
  std::map<Protocol, Selector> selectors;
  auto selector_for = [&](Protocol protocol) -> Selector& {
    auto it = selectors.find(protocol);
    if (it == selectors.end()) {
      CostParams priced = cost;
      priced.protocol = protocol;
      it = selectors.emplace(protocol, Selector(priced)).first;
    }
    return it->second;
  };
  // Rows of a type or reduction cclab does not model (nccl-tests -d all, -o all) are passed over, counted by
  // the reason; a log with nothing else is refused with it.
  std::map<std::string, int> passed_over;
  for (const NcclTestsRow& row : log.rows) {
    const auto dtype = dtype_of_nccl_type(row.type);
    if (!dtype) {
      ++passed_over[fmt::format("type '{}' is not one cclab models (float, half, bfloat16)", row.type)];
      continue;
    }
    ReduceOp op = ReduceOp::Sum;
    if (row.redop != "none") {
      const auto parsed = parse_reduce_op(row.redop);
      if (!parsed) {
        ++passed_over[fmt::format("reduction '{}' is not one cclab models (sum, avg, min, max)", row.redop)];
        continue;
      }
      op = *parsed;
    }
    // nccl-tests' size is the buffer its algbw divides (the whole output of an allgather, the whole input of
    // a reduce-scatter), which is cclab's count too.
    const std::uint64_t count = row.bytes / dtype_size_bytes(*dtype);
    // A rooted collective's row names its root (nccl-tests -r); the others print -1.
    int root = 0;
    if (is_rooted(out.collective) && row.root >= 0) {
      if (row.root >= world) {
        ++passed_over[fmt::format("root {} is not a rank of the {} the topology has", row.root, world)];
        continue;
      }
      root = row.root;
    }
    const CollectiveSpec spec = spec_for(topology, out.collective, count, *dtype, op, root);
    // NCCL prints an allgather's and a reduce-scatter's bytes per rank in some versions, the whole in others.
    auto tuned = by_size.find(row.bytes);
    if (tuned == by_size.end() &&
        (out.collective == Collective::AllGather || out.collective == Collective::ReduceScatter))
      tuned = by_size.find(row.bytes / static_cast<std::uint64_t>(world));
    const RowChoice choice = tuned != by_size.end() ? tuned->second : RowChoice{algorithm, cost.protocol, 0};
    PlanOptions row_options = options;
    if (row_options.channels == 0) row_options.channels = choice.channels;  // --channels wins
    const Candidate& chosen =
        selector_for(choice.protocol).choose(spec, topology, choice.algorithm, row_options);
    if (!chosen.support.ok) {
      throw ConfigError(fmt::format("{}: {} bytes: {}", log.source, row.bytes, chosen.support.reason));
    }
    ComparedRow r;
    r.measured = row;
    r.algorithm = chosen.algorithm;
    r.predicted_s = chosen.time_s;
    r.predicted_busbw_GBps =
        nccl_tests_bandwidths(out.collective, world, static_cast<double>(spec.bytes()), chosen.time_s)
            .busbw_GBps;
    r.error = row.time_us > 0 ? (chosen.time_s * 1e6 - row.time_us) / row.time_us : 0;
    out.rows.push_back(r);
  }
  if (out.rows.empty() && !passed_over.empty())
    throw ConfigError(fmt::format("{}: {}", log.source, passed_over.begin()->first));
  for (const auto& [reason, rows] : passed_over)
    out.notes.push_back(fmt::format("{} row{} not compared: {}", rows, rows == 1 ? "" : "s", reason));
  // nccl-tests -g G: one thread posts the collective to G GPUs inside one NCCL group, and ncclGroupEnd
  // launches their kernels one after another, so each iteration carries G launches' host work. Small
  // collectives are paced by it: their times are flat at G times a few microseconds (4 x H100, -g 4, NCCL
  // 2.29: 23.3 us from 8 B to 4 KiB, where NCCL's own tuning model says 10.2; 2 x 8 H200, -g 8: 43.5-45.1 us
  // from 1 to 4 KiB; 2 to 8 A100, -g N, nccl-tests#123: 4.2 us a GPU from four GPUs on). The model's launch
  // cost is one launch, as with one process per GPU; the note gives the log's own floor per GPU and the rows
  // the model puts below it, where the host, not the GPUs, set the measured time.
  if (log.gpus_per_thread > 1 && !out.rows.empty()) {
    double floor_us = out.rows.front().measured.time_us;
    for (const ComparedRow& r : out.rows)
      floor_us = std::min(floor_us, r.measured.time_us);
    const auto below = std::count_if(out.rows.begin(), out.rows.end(),
                                     [&](const ComparedRow& r) { return r.predicted_s * 1e6 < floor_us; });
    out.notes.push_back(fmt::format(
        "each thread of the run drove {} GPUs (nccl-tests -g {}) and launched their kernels one after the "
        "other every iteration; the model launches once per rank (one process per GPU: mpirun/srun with -g "
        "1), so where latency dominates the measured times carry host work it leaves out: no collective of "
        "the run took less than {:.1f} us, {:.1f} us a GPU, and the model puts {} of its {} rows below that",
        log.gpus_per_thread, log.gpus_per_thread, floor_us, floor_us / log.gpus_per_thread, below,
        out.rows.size()));
  }
  // nccl-tests -G N: N iterations in one CUDA graph launch, so each carries a small part of a launch, where
  // the model charges every collective NCCL's base latency, a launch included.
  if (log.graph_iterations > 0) {
    out.notes.push_back(fmt::format(
        "the run launched its iterations {} at a time as one CUDA graph (nccl-tests -G {}), which takes most "
        "of a collective's launch cost off it; the model charges every collective NCCL's base latency, a "
        "launch included, so where latency dominates it predicts longer times than such a run measures",
        log.graph_iterations, log.graph_iterations));
  }
  return out;
}

std::optional<topo::GpuArch> gpu_arch_of_name(std::string_view name) {
  // NCCL picks its row by the lowest compute capability: sm_100 and up Blackwell, sm_90 Hopper, sm_80 to 89
  // Ampere (Ada included), below Volta (Pascal and Turing included).
  struct Family {
    std::string_view marker;
    topo::GpuArch arch;
  };
  static constexpr Family kFamilies[] = {
      {"GB200", topo::GpuArch::Blackwell},     {"GB300", topo::GpuArch::Blackwell},
      {"B200", topo::GpuArch::Blackwell},      {"B300", topo::GpuArch::Blackwell},
      {"B100", topo::GpuArch::Blackwell},      {"GB10", topo::GpuArch::Blackwell},
      {"Blackwell", topo::GpuArch::Blackwell}, {"H100", topo::GpuArch::Hopper},
      {"H200", topo::GpuArch::Hopper},         {"H800", topo::GpuArch::Hopper},
      {"H20", topo::GpuArch::Hopper},          {"A100", topo::GpuArch::Ampere},
      {"A800", topo::GpuArch::Ampere},         {"A30", topo::GpuArch::Ampere},
      {"A40", topo::GpuArch::Ampere},          {"A10", topo::GpuArch::Ampere},
      {"L40", topo::GpuArch::Ampere},          {"RTX 30", topo::GpuArch::Ampere},
      {"RTX 40", topo::GpuArch::Ampere},       {"V100", topo::GpuArch::Volta},
      {"P100", topo::GpuArch::Volta},          {"T4", topo::GpuArch::Volta},
      {"RTX 20", topo::GpuArch::Volta}};
  for (const Family& f : kFamilies)
    if (name.find(f.marker) != std::string_view::npos) return f.arch;
  return std::nullopt;
}

std::string preset_for_log(const NcclTestsLog& log) {
  if (log.gpus.empty())
    throw ConfigError(
        fmt::format("{}: the log has no device lines to take the machine from; give --topology", log.source));
  if (static_cast<int>(log.gpus.size()) != log.ranks)
    throw ConfigError(
        fmt::format("{}: the log lists the device lines of {} of its {} ranks, too few to take "
                    "the machine from; give --topology",
                    log.source, log.gpus.size(), log.ranks));
  struct Board {
    std::string_view marker, preset, nvlink;
    int gpus;  // per node; the DGX-1 presets take no gpus=
    bool resizable;
  };
  // The first whose marker the name contains: "GB200" before "B200", "GH200" and "H200" before "H20". The
  // Grace superchips (GB200, GH200) sit in NVLink domains of other shapes than a board: no preset here.
  static constexpr Board kBoards[] = {{"GB200", "", "", 0, false},
                                      {"GH200", "", "", 0, false},
                                      {"B200", "dgx_b200", "", 8, true},
                                      {"H200", "dgx_h200", "", 8, true},
                                      {"H800", "dgx_h100", "200GB/s", 8, true},
                                      {"H100", "dgx_h100", "", 8, true},
                                      {"H20", "dgx_h100", "", 8, true},
                                      {"A800", "dgx_a100", "200GB/s", 8, true},
                                      {"A100", "dgx_a100", "", 8, true},
                                      {"V100", "dgx1_v100", "", 8, false},
                                      {"P100", "dgx1_p100", "", 8, false}};
  const std::string& gpu = log.gpus.front();
  const Board* board = nullptr;
  for (const Board& b : kBoards)
    if (gpu.find(b.marker) != std::string::npos) {
      board = &b;
      break;
    }
  // PCIe cards ("H100 PCIe", "A100-PCIE-40GB", "H100 NVL": PCIe cards bridged in pairs) are not on an
  // NVSwitch board.
  const bool pcie_card =
      gpu.find("PCIe") != std::string::npos || gpu.find("PCIE") != std::string::npos || gpu.ends_with(" NVL");
  if (!board || board->preset.empty() || pcie_card) {
    throw ConfigError(
        fmt::format("{}: no preset for '{}' here (NVSwitch boards of A100/A800, H100/H800/H20, "
                    "H200, B200 and the DGX-1 V100/P100); give --topology",
                    log.source, gpu));
  }
  for (const std::string& other : log.gpus)
    if (other != gpu)
      throw ConfigError(
          fmt::format("{}: ranks on different GPUs ('{}', '{}'); give --topology", log.source, gpu, other));
  std::vector<std::string> hosts;
  std::map<std::string, int> per_host;
  for (const std::string& h : log.hosts) {
    if (h.empty())
      throw ConfigError(fmt::format("{}: the device lines do not name hosts; give --topology", log.source));
    if (per_host[h]++ == 0) hosts.push_back(h);
  }
  const int each = per_host.at(hosts.front());
  for (const auto& [h, n] : per_host)
    if (n != each)
      throw ConfigError(fmt::format("{}: hosts run {} and {} ranks; give --topology", log.source, each, n));
  if (each > board->gpus || (!board->resizable && each != board->gpus)) {
    throw ConfigError(fmt::format("{}: {} ranks per host on a {} board of {} GPUs; give --topology",
                                  log.source, each, board->preset, board->gpus));
  }
  std::string spec = fmt::format("{}:{}", board->preset, hosts.size());
  if (each != board->gpus) spec += fmt::format(",gpus={}", each);
  if (!board->nvlink.empty()) spec += fmt::format(",nvlink={}", board->nvlink);
  // The network, where NCCL said which (its INFO lines) and it is not the presets' InfiniBand.
  if (hosts.size() > 1) {
    if (const auto kind = network_kind_of_log(log); kind && *kind != topo::LinkKind::InfiniBand)
      spec += fmt::format(",net={}", *kind == topo::LinkKind::Ethernet ? "roce" : topo::to_string(*kind));
  }
  return spec;
}

namespace {

// What the log said of its network, for messages: "Using network Socket", "NET/IB link layer RoCE", ...
std::string network_evidence(const NcclTestsLog& log) {
  std::vector<std::string> said;
  if (!log.network.empty()) said.push_back(fmt::format("\"Using network {}\"", log.network));
  if (!log.ib_link_layer.empty()) said.push_back(fmt::format("NET/IB link layer {}", log.ib_link_layer));
  if (!log.ofi_provider.empty()) said.push_back(fmt::format("OFI provider {}", log.ofi_provider));
  return fmt::format("{}", fmt::join(said, ", "));
}

}  // namespace

std::vector<std::string> machine_mismatches(const NcclTestsLog& log, const topo::Topology& topology) {
  std::vector<std::string> out;
  const int world = static_cast<int>(topology.gpus().size());
  // Ranks per host against ranks per node of the topology's GPUs, as sorted counts.
  auto counts = [](const std::vector<std::string>& keys) {
    std::map<std::string, int> per_key;
    for (const std::string& k : keys)
      ++per_key[k];
    std::vector<int> sizes;
    for (const auto& [k, n] : per_key)
      sizes.push_back(n);
    std::sort(sizes.begin(), sizes.end());
    return sizes;
  };
  // "2 hosts (1 rank each)", "1 node (8 ranks)", "3 hosts (4, 8, 8 ranks)".
  auto describe = [](const std::vector<int>& sizes, std::string_view what) {
    const std::string places = fmt::format("{} {}{}", sizes.size(), what, sizes.size() == 1 ? "" : "s");
    if (sizes.size() == 1) return fmt::format("{} ({} ranks)", places, sizes.front());
    if (sizes.front() == sizes.back())
      return fmt::format("{} ({} rank{} each)", places, sizes.front(), sizes.front() == 1 ? "" : "s");
    return fmt::format("{} ({} ranks)", places, fmt::join(sizes, ", "));
  };
  const bool hosts_known =
      !log.hosts.empty() && static_cast<int>(log.hosts.size()) == world &&
      std::none_of(log.hosts.begin(), log.hosts.end(), [](const auto& h) { return h.empty(); });
  if (hosts_known) {
    std::vector<std::string> nodes;
    for (int r = 0; r < world; ++r)
      nodes.push_back(std::to_string(topology.node_of_rank(r)));
    const std::vector<int> by_host = counts(log.hosts), by_node = counts(nodes);
    if (by_host != by_node) {
      out.push_back(fmt::format("measured on {}, but topology '{}' has its GPUs on {}",
                                describe(by_host, "host"), topology.name(), describe(by_node, "node")));
    }
  }
  // The network NCCL said it ran over against the topology's network links.
  if (const auto measured = network_kind_of_log(log)) {
    std::set<topo::LinkKind> kinds;
    for (const topo::Link& l : topology.links())
      if (topo::is_network(l.kind)) kinds.insert(l.kind);
    if (!kinds.empty() && !kinds.contains(*measured)) {
      std::vector<std::string_view> names;
      for (const topo::LinkKind k : kinds)
        names.push_back(topo::to_string(k));
      out.push_back(fmt::format(
          "NCCL ran over {} (its INFO lines: {}), but topology '{}' has {} network links",
          topo::to_string(*measured), network_evidence(log), topology.name(), fmt::join(names, ", ")));
    }
  }
  if (const auto model = topology.gpu_arch()) {
    for (const std::string& gpu : log.gpus) {
      const auto measured = gpu_arch_of_name(gpu);
      if (measured && *measured != *model) {
        out.push_back(fmt::format("measured on {} ({}), but topology '{}' models {} GPUs", gpu,
                                  topo::to_string(*measured), topology.name(), topo::to_string(*model)));
        break;
      }
    }
  }
  return out;
}

std::optional<double> median_abs_error(const Comparison& c, std::uint64_t min_bytes,
                                       std::uint64_t max_bytes) {
  std::vector<double> errors;
  for (const ComparedRow& r : c.rows)
    if (r.measured.bytes >= min_bytes && r.measured.bytes <= max_bytes) errors.push_back(std::abs(r.error));
  if (errors.empty()) return std::nullopt;
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  return n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
}

}  // namespace cclab
