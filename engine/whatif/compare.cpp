#include "engine/whatif/compare.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "engine/plan/selection.hpp"

namespace cclab {

LogChoice choice_for_log(const NcclTestsLog& log, std::optional<Collective> collective,
                         std::optional<std::string> algorithm, std::optional<Protocol> protocol,
                         const std::string& fallback_algorithm, Protocol fallback_protocol) {
  LogChoice c{algorithm.value_or(fallback_algorithm), protocol.value_or(fallback_protocol), {}, {}};
  if (!collective) collective = log.collective;
  if (!algorithm && !log.nccl_algo.empty() && collective) {
    // The value is NCCL's name in any case ("nvls" across nodes is NCCL's NVLS there: nvls_sharp); spelled as
    // the registry spells NCCL's names, it selects what NCCL runs under it.
    std::string forced = log.nccl_algo;
    for (const Algorithm* a : algorithms_for(*collective))
      if (!a->nccl.empty() && ascii_lowercase(a->nccl) == ascii_lowercase(forced)) forced = a->nccl;
    if (is_selection(*collective, forced)) {
      c.algorithm = forced;
      c.note += fmt::format(", NCCL_ALGO={} from the log", log.nccl_algo);
    } else {
      c.note += fmt::format(", the log's NCCL_ALGO={} is not one of NCCL's {} algorithms here: {}",
                            log.nccl_algo, to_string(*collective), c.algorithm);
    }
  }
  // NCCL's tuner, size by size, for what the user did not give.
  if (collective && !(algorithm && protocol)) {
    int sizes = 0, skipped = 0;
    for (const auto& [bytes, tuned] : log.tuned) {
      if (!algorithm && !is_selection(*collective, tuned.algorithm)) {
        ++skipped;  // an algorithm cclab does not plan (CollNetChain), or not for this collective
        continue;
      }
      const auto tuned_protocol = parse_protocol(ascii_lowercase(tuned.protocol));
      // The channels NCCL ran the size on go with its own algorithm only.
      c.by_size[bytes] = {algorithm ? *algorithm : tuned.algorithm,
                          protocol ? *protocol : tuned_protocol.value_or(c.protocol),
                          algorithm ? 0 : tuned.channels};
      ++sizes;
    }
    if (sizes > 0) c.note += fmt::format(", NCCL's tuner choice from the log at {} sizes", sizes);
    if (skipped > 0)
      c.note += fmt::format(" ({} sizes with algorithms cclab does not plan: {})", skipped, c.algorithm);
  }
  if (!protocol && !log.nccl_proto.empty()) {
    if (const auto forced = parse_protocol(ascii_lowercase(log.nccl_proto));
        forced && *forced != Protocol::Raw && *forced != Protocol::Auto) {
      c.protocol = *forced;
      c.note += fmt::format(", NCCL_PROTO={} from the log", log.nccl_proto);
    } else {
      c.note += fmt::format(", the log's NCCL_PROTO={} is not one protocol: {}", log.nccl_proto,
                            to_string(c.protocol));
    }
  }
  return c;
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
  for (const NcclTestsRow& row : log.rows) {
    const auto dtype = dtype_of_nccl_type(row.type);
    if (!dtype) {
      throw ConfigError(
          fmt::format("{}: type '{}' is not one cclab models (float, half, bfloat16)", log.source, row.type));
    }
    ReduceOp op = ReduceOp::Sum;
    if (row.redop != "none") {
      const auto parsed = parse_reduce_op(row.redop);
      if (!parsed) {
        throw ConfigError(fmt::format("{}: reduction '{}' is not one cclab models (sum, avg, min, max)",
                                      log.source, row.redop));
      }
      op = *parsed;
    }
    // nccl-tests' size is the buffer its algbw divides (the whole output of an allgather, the whole input of
    // a reduce-scatter), which is cclab's count too.
    const std::uint64_t count = row.bytes / dtype_size_bytes(*dtype);
    const CollectiveSpec spec = spec_for(topology, out.collective, count, *dtype, op, 0);
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
        chosen.time_s > 0 ? spec.bytes() / chosen.time_s / 1e9 * busbw_factor(out.collective, world) : 0;
    r.error = row.time_us > 0 ? (chosen.time_s * 1e6 - row.time_us) / row.time_us : 0;
    out.rows.push_back(r);
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
