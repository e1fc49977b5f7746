// The link model fitted to nccl-tests measurements (`cclab calibrate --from-nccl-tests`): the payload
// efficiency and per-message overhead (topo::LinkModel) of the link kind that bounds the measured collective
// — the network's on more than one node, else the GPUs' own links (NVSwitch, NVLink or PCIe) — chosen so that
// the α-β model's times for the logged rows match the measured ones: least squares of log(predicted /
// measured) over every row, so that an 8-byte row and a 1-GiB row count alike. Efficiency sets the large
// sizes, the overhead (paid per message per hop) the small ones: nested golden-section searches, the overhead
// outside in [0, 100 us], the efficiency inside in [0.02, 1]. Everything else in the topology stays.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/cost.hpp"
#include "engine/plan/registry.hpp"
#include "engine/measure/compare.hpp"
#include "engine/measure/nccl_tests_log.hpp"
#include "topology/topology.hpp"

namespace cclab {

struct LogFit {
  topo::LinkKind kind = topo::LinkKind::NvSwitch;
  topo::LinkModel before, after;
  double median_error_before = 0, median_error_after = 0;  // median |predicted/measured - 1| over all rows
  int rows = 0;
  // The algorithms the rows were planned with in the end, each once, in the order met: what a selection
  // ("ring" read as NCCL's Ring, "nccl") became (an alltoall log under Ring: pairwise).
  std::vector<std::string> planned;
};

// The kind fit_link_model fits on this topology.
topo::LinkKind bounding_link_kind(const topo::Topology& topology);

// Sets the fitted model on `topology` and returns it with the errors before and after. ConfigError as
// compare_with_model (the logs' ranks, types, collective). `by_size[i]`: log i's per-size choices
// (LogChoice::by_size; empty or missing: none).
LogFit fit_link_model(const std::vector<NcclTestsLog>& logs, topo::Topology& topology,
                      std::optional<Collective> collective, const std::string& algorithm,
                      const PlanOptions& options, const CostParams& cost,
                      const std::vector<std::map<std::uint64_t, RowChoice>>& by_size = {});

}  // namespace cclab
