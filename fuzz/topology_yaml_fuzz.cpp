// libFuzzer harness: the topology YAML loader (topology/yaml_io.hpp). An input is either refused with a
// ConfigError naming "fuzz.yaml" (and its line and field), or it loads, and then:
//  - it dumps to YAML that loads back equal (the round trip users rely on for calibrated files);
//  - on small worlds, every allreduce algorithm either declines with a reason or plans a schedule the
//  verifier
//    accepts, and the cost table's times are finite: a hand-written topology must never break a planner.
#include <cmath>

#include <fmt/format.h>

#include "engine/check/verifier.hpp"
#include "engine/plan/selection.hpp"
#include "fuzz/fuzz_check.hpp"
#include "topology/yaml_io.hpp"

namespace {

using cclab::fuzz::require;

constexpr std::size_t kMaxPlannedGpus = 16;

void plan_every_allreduce(const cclab::topo::Topology& topology) {
  const auto gpus = topology.gpus().size();
  const auto spec = cclab::spec_for(topology, cclab::Collective::AllReduce, 4 * gpus + 3, cclab::DType::F32);
  for (const cclab::Algorithm* algorithm : cclab::algorithms_for(cclab::Collective::AllReduce)) {
    // Routing may refuse a topology whose GPUs are not connected: that is a clear user error.
    auto planned = cclab::fuzz::load_or_clear_error(
        "", [&] { return cclab::plan_collective(spec, topology, algorithm->name); });
    if (!planned || !planned->schedule) continue;
    const auto problem = cclab::verify(*planned->schedule);
    require(!problem, fmt::format("planner '{}' made a schedule the verifier rejects", algorithm->name),
            problem.value_or(""));
  }
  if (auto rows = cclab::fuzz::load_or_clear_error("", [&] { return cclab::cost_table(spec, topology); })) {
    for (const auto& row : *rows)
      require(!row.support.ok || (std::isfinite(row.time_s) && row.time_s >= 0), "a cost that is not finite",
              row.algorithm);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cclab::fuzz::as_text(data, size);
  auto topology = cclab::fuzz::load_or_clear_error(
      "fuzz.yaml", [&] { return cclab::topo::parse_topology_yaml(text, "fuzz.yaml"); });
  if (!topology) return 0;
  require(!topology->gpus().empty(), "a topology without GPUs loaded");
  const std::string dumped = cclab::topo::dump_topology_yaml(*topology);
  auto again = cclab::fuzz::load_or_clear_error(
      "dump.yaml", [&] { return cclab::topo::parse_topology_yaml(dumped, "dump.yaml"); });
  require(again.has_value(), "the dump of a loaded topology does not load", dumped);
  require(*again == *topology, "the dump of a loaded topology loads as a different topology", dumped);
  if (topology->gpus().size() <= kMaxPlannedGpus) plan_every_allreduce(*topology);
  return 0;
}
