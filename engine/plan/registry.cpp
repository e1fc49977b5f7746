#include "engine/plan/registry.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "engine/plan/chain_broadcast.hpp"
#include "engine/plan/chain_reduce.hpp"
#include "engine/plan/collnet_allreduce.hpp"
#include "engine/plan/collnet_chain_allreduce.hpp"
#include "engine/plan/direct_rooted.hpp"
#include "engine/plan/halving_doubling_allreduce.hpp"
#include "engine/plan/hierarchical_allreduce.hpp"
#include "engine/plan/hypercube_allgather.hpp"
#include "engine/plan/leader_allreduce.hpp"
#include "engine/plan/nvls_allgather.hpp"
#include "engine/plan/nvls_allreduce.hpp"
#include "engine/plan/nvls_reduce_scatter.hpp"
#include "engine/plan/nvls_sharp_allreduce.hpp"
#include "engine/plan/nvls_tree_allreduce.hpp"
#include "engine/plan/pairwise_alltoall.hpp"
#include "engine/plan/pat_allgather.hpp"
#include "engine/plan/pat_reduce_scatter.hpp"
#include "engine/plan/ring_allgather.hpp"
#include "engine/plan/ring_allreduce.hpp"
#include "engine/plan/ring_reduce_scatter.hpp"
#include "engine/plan/shift_sendrecv.hpp"
#include "engine/plan/tree_allreduce.hpp"
#include "engine/plan/tree_broadcast.hpp"
#include "engine/plan/tree_reduce.hpp"

namespace cclab {
namespace {

// Every consumer takes an algorithm as the registry hands it: its planner checks the collective it is given
// and fills in the chunk the plan was asked for where the planner sets none of its own (the tree does).
Algorithm registered(Algorithm a) {
  a.compact = [plan = std::move(a.compact), c = a.collective](const CollectiveSpec& spec,
                                                              const topo::Topology& t, const PlanOptions& o) {
    CCLAB_ENFORCE(spec.collective == c, "planner for {} given {}", to_string(c), to_string(spec.collective));
    CompactSchedule s = plan(spec, t, o);
    if (s.params.chunk_bytes == 0) s.params.chunk_bytes = o.chunk_bytes;
    return s;
  };
  return a;
}

// The algorithms, by collective in this order (selection breaks ties by it, and `cclab algorithms` lists it).
std::vector<Algorithm> make_registry() {
  std::vector<Algorithm> list{planners::ring_allreduce_algorithm(),
                              planners::tree_allreduce_algorithm(),
                              planners::hierarchical_allreduce_algorithm(),
                              planners::leader_allreduce_algorithm(),
                              planners::nvls_allreduce_algorithm(),
                              planners::nvls_tree_allreduce_algorithm(),
                              planners::collnet_allreduce_algorithm(),
                              planners::collnet_chain_allreduce_algorithm(),
                              planners::nvls_sharp_allreduce_algorithm(),
                              planners::halving_doubling_allreduce_algorithm(),
                              planners::ring_reduce_scatter_algorithm(),
                              planners::pat_reduce_scatter_algorithm(),
                              planners::nvls_reduce_scatter_algorithm(),
                              planners::ring_allgather_algorithm(),
                              planners::pat_allgather_algorithm(),
                              planners::hypercube_allgather_algorithm(),
                              planners::nvls_allgather_algorithm(),
                              planners::chain_broadcast_algorithm(),
                              planners::tree_broadcast_algorithm(),
                              planners::chain_reduce_algorithm(),
                              planners::tree_reduce_algorithm(),
                              planners::pairwise_alltoall_algorithm(),
                              planners::direct_gather_algorithm(),
                              planners::direct_scatter_algorithm(),
                              planners::shift_sendrecv_algorithm()};
  for (Algorithm& a : list)
    a = registered(std::move(a));
  return list;
}

}  // namespace

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> registry = make_registry();
  return registry;
}

std::vector<const Algorithm*> algorithms_for(Collective collective) {
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : algorithms())
    if (a.collective == collective) out.push_back(&a);
  return out;
}

const Algorithm* find_algorithm(Collective collective, std::string_view name) {
  for (const Algorithm* a : algorithms_for(collective))
    if (a->name == name) return a;
  return nullptr;
}

namespace {

// NCCL_ALGO values of the collective's algorithms, each once, in registry order ("CollNet" is NCCL's older
// spelling of CollNetDirect and is accepted as well).
std::vector<std::string_view> nccl_names(Collective collective) {
  std::vector<std::string_view> names;
  for (const Algorithm* a : algorithms_for(collective))
    if (a->nccl && std::find(names.begin(), names.end(), a->nccl_name()) == names.end())
      names.push_back(a->nccl_name());
  return names;
}

[[noreturn]] void unknown_algorithm(Collective collective, std::string_view name) {
  const std::vector<std::string_view> nccl = nccl_names(collective);
  throw ConfigError(fmt::format("unknown {} algorithm '{}' (valid: {}, auto, nccl{}{}{})",
                                to_string(collective), name, algorithm_names(collective),
                                nccl.empty() ? "" : "; NCCL_ALGO names: ", fmt::join(nccl, ", "),
                                nccl.empty() ? "" : ", a list of them, or ^ and the ones to leave out"));
}

}  // namespace

const Algorithm& require_algorithm(Collective collective, std::string_view name) {
  if (const Algorithm* a = find_algorithm(collective, name)) return *a;
  unknown_algorithm(collective, name);
}

std::optional<std::vector<const Algorithm*>> selection_candidates(Collective collective,
                                                                  std::string_view name) {
  if (find_algorithm(collective, name)) return std::nullopt;
  const std::vector<const Algorithm*> all = algorithms_for(collective);
  if (name == "auto") return all;
  // NCCL_ALGO's own syntax ("^NVLS,NVLSTree" is how runs turn NVLink SHARP off); NCCL also takes CollNet
  // for CollNetDirect (parse_nccl_algo).
  const NcclNameList list = parse_nccl_name_list(name);
  const bool excluding = list.excluding;
  const bool everything = list.names.size() == 1 && list.names[0] == "nccl" && !excluding;
  std::vector<NcclAlgo> wanted;
  if (!everything) {
    // Every name must be one of NCCL's (here or for another collective or topology): a typo is not a
    // selection.
    for (const std::string& one : list.names) {
      const std::optional<NcclAlgo> algo = parse_nccl_algo(one);
      if (!algo) return std::nullopt;
      wanted.push_back(*algo);
    }
  }
  std::vector<const Algorithm*> chosen;
  for (const Algorithm* a : all) {
    if (a->nccl_p2p) {
      chosen.push_back(a);
      continue;
    }
    if (!a->nccl) continue;
    const bool named = std::find(wanted.begin(), wanted.end(), *a->nccl) != wanted.end();
    if (everything || named != excluding) chosen.push_back(a);
  }
  if (everything) return chosen;
  if (chosen.empty()) return std::nullopt;
  return chosen;
}

bool is_selection(Collective collective, std::string_view name) {
  return selection_candidates(collective, name).has_value();
}

std::string algorithm_names(Collective collective) {
  std::vector<std::string> names;
  for (const Algorithm* a : algorithms_for(collective))
    names.push_back(a->name);
  return fmt::format("{}", fmt::join(names, ", "));
}

CollectiveSpec spec_for(const topo::Topology& topology, Collective collective, std::uint64_t count,
                        DType dtype, ReduceOp op, int root) {
  CollectiveSpec spec;
  spec.collective = collective;
  spec.count = count;
  spec.dtype = dtype;
  spec.op = op;
  spec.root = root;
  spec.world_size = static_cast<int>(topology.gpus().size());
  return spec;
}

}  // namespace cclab
