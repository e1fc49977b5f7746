// The algorithm registry: the list of every planner's descriptor (engine/plan/algorithm.hpp), by collective
// and name. Selection (`auto`, `nccl`) and the plan-by-name entry points are in engine/plan/selection.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/schedule.hpp"
#include "engine/model/nccl_tuning.hpp"
#include "engine/plan/algorithm.hpp"
#include "topology/topology.hpp"

namespace cclab {

const std::vector<Algorithm>& algorithms();
std::vector<const Algorithm*> algorithms_for(Collective collective);
const Algorithm* find_algorithm(Collective collective, std::string_view name);
// find_algorithm, or ConfigError naming the valid ones.
const Algorithm& require_algorithm(Collective collective, std::string_view name);
std::string algorithm_names(Collective collective);  // "ring, tree, ..." for error messages

// NCCL's algorithm names (NCCL_ALGO's vocabulary) and the first NCCL release whose source defines each
// (NCCL_ALGO_* in its headers, checked at the release tags): Tree 2.4.2, CollNet 2.6.4 (CollNetDirect since
// CollNetChain came, 2.14.3), NVLS 2.17.1, NVLSTree 2.18.1, PAT 2.23.4; Ring always. Versions as NCCL's
// NCCL_VERSION_CODE: major·10000 + minor·100 + patch.
struct NcclAlgorithmSince {
  NcclAlgo algo;
  int since_version_code;
};
inline constexpr NcclAlgorithmSince kNcclAlgorithms[] = {
    {NcclAlgo::Tree, 20402},         {NcclAlgo::Ring, 0},     {NcclAlgo::CollNetDirect, 20604},
    {NcclAlgo::CollNetChain, 21403}, {NcclAlgo::Nvls, 21701}, {NcclAlgo::NvlsTree, 21801},
    {NcclAlgo::Pat, 22304}};

// Names that select among algorithms rather than name one: "auto" (the cheapest of every algorithm of the
// collective), "nccl" (NCCL's own algorithms, of which NCCL's tuning model picks one: Selector::choose),
// and NCCL_ALGO values in
// any case (Ring, Tree, NVLS, NVLSTree, CollNetDirect or CollNet, PAT): the algorithms NCCL runs under that
// name here (NVLS is nvls inside one node and nvls_sharp across nodes), a comma-separated list of them, or
// with a leading '^' NCCL's set without them ("^NVLS,NVLSTree"), as NCCL_ALGO takes them. A registry name is
// never a selection.
// Returns the candidates, in registry order; nullopt when `name` is not a selection.
std::optional<std::vector<const Algorithm*>> selection_candidates(Collective collective,
                                                                  std::string_view name);
bool is_selection(Collective collective, std::string_view name);

// The spec a topology implies: world size = its GPU count.
CollectiveSpec spec_for(const topo::Topology& topology, Collective collective, std::uint64_t count,
                        DType dtype, ReduceOp op = ReduceOp::Sum, int root = 0);

}  // namespace cclab
