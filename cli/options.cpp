#include "cli/options.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"
#if CCLAB_HAVE_SIMGRID
#include "sim/timer.hpp"
#endif

namespace cclab::cli {

void CollectiveArgs::add_to(CLI::App& cmd) {
  cmd.add_option("-t,--topology", topology, "preset NAME:NODES[,key=value...] or YAML file")
      ->capture_default_str();
  cmd.add_option("-c,--collective", collective, std::string("collective: ") + std::string(kCollectiveNames))
      ->capture_default_str();
  cmd.add_option("-d,--dtype", dtype, std::string("element type: ") + std::string(kDTypeNames))
      ->capture_default_str();
  cmd.add_option("-o,--op", op, std::string("reduction: ") + std::string(kReduceOpNames))
      ->capture_default_str();
  cmd.add_option("--root", root, "root rank of broadcast, reduce, gather and scatter")->capture_default_str();
  cmd.add_option("--chunk", chunk,
                 "pipeline chunk size (0: unchunked, one chunk per block; the plan says so)")
      ->capture_default_str();
  cmd.add_option("--channels", channels, "channels (0: the algorithm's default for the topology)")
      ->capture_default_str();
  cmd.add_option("--inter", inter, "hierarchical: inter-node algorithm, ring or tree")->capture_default_str();
  cmd.add_option(
         "--protocol", protocol,
         std::string("NCCL protocol the model prices messages with (auto: the cheapest per collective; "
                     "raw: the route alone): ") +
             std::string(kProtocolNames) + ", or as NCCL_PROTO takes them (ll,simple; ^ll128)")
      ->capture_default_str();
  cmd.add_option("--reduce-bw", reduce_bw, "GPU reduction throughput for the cost model")
      ->capture_default_str();
}

CollectiveSpec CollectiveArgs::spec(const topo::Topology& t, const std::string& size) const {
  auto c = parse_collective(collective);
  if (!c)
    throw ConfigError(fmt::format("--collective '{}' is unknown (valid: {})", collective, kCollectiveNames));
  auto d = parse_dtype(dtype);
  if (!d) throw ConfigError(fmt::format("--dtype '{}' is unknown (valid: {})", dtype, kDTypeNames));
  auto o = parse_reduce_op(op);
  if (!o) throw ConfigError(fmt::format("--op '{}' is unknown (valid: {})", op, kReduceOpNames));
  std::uint64_t bytes = 0;
  try {
    bytes = parse_size_bytes(size);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("--size: {}", e.what()));
  }
  const std::size_t elem = dtype_size_bytes(*d);
  if (bytes % elem != 0)
    throw ConfigError(fmt::format("--size {} is not a whole number of {} elements", size, dtype));
  const int world = static_cast<int>(t.gpus().size());
  if (root < 0 || root >= world)
    throw ConfigError(fmt::format("--root {} is not a rank of 0..{}", root, world - 1));
  return spec_for(t, *c, bytes / elem, *d, *o, root);
}

PlanOptions CollectiveArgs::plan_options() const {
  PlanOptions o;
  try {
    o.chunk_bytes = parse_size_bytes(chunk);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("--chunk: {}", e.what()));
  }
  if (channels < 0 || channels > 64)
    throw ConfigError(fmt::format("--channels {} is outside 0..64", channels));
  o.channels = channels;
  if (inter != "ring" && inter != "tree")
    throw ConfigError(fmt::format("--inter '{}' is unknown (valid: ring, tree)", inter));
  o.inter = inter;
  return o;
}

CostParams CollectiveArgs::cost_params() const {
  CostParams p;
  try {
    p.reduce_Bps = parse_bandwidth_Bps(reduce_bw);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("--reduce-bw: {}", e.what()));
  }
  if (const auto proto = parse_protocol(protocol)) {
    p.protocol = *proto;
    return p;
  }
  // NCCL_PROTO's own syntax: the cheapest of a list, or of NCCL's protocols but some ("^LL128").
  const auto set =
      protocol.find_first_of(",^") != std::string::npos ? nccl_protocol_set(protocol) : std::nullopt;
  if (!set) {
    throw ConfigError(
        fmt::format("--protocol '{}' is unknown (valid: {}, or as NCCL_PROTO takes them: a list "
                    "such as ll,simple, or ^ and the ones to leave out)",
                    protocol, kProtocolNames));
  }
  p.protocol = Protocol::Auto;
  p.auto_protocols = *set;
  return p;
}

void use_simulator(PredictOptions& options, bool by_pattern) {
#if CCLAB_HAVE_SIMGRID
  sim::SimParams params;
  params.by_pattern = by_pattern;
  options.simulate = sim::schedule_timer(params);
  options.simulate_batch = sim::schedule_batch_timer(params);
#else
  (void)options, (void)by_pattern;
#endif
}

}  // namespace cclab::cli
