#include "cli/distributed.hpp"

#include <cstdlib>
#include <mutex>
#include <sstream>

#include "common/error.hpp"
#include "common/module.hpp"

namespace cclab::cli {
namespace {

const MpiModule& load_mpi_module() {
  static const MpiModule* entry = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    entry = static_cast<const MpiModule*>(load_module_entry(
        kMpiModuleFile, kMpiModuleEntry,
        fmt::format("started by an MPI launcher with {} processes, but the MPI module", launched_processes()),
        "it is built with cclab where Open MPI is found; run without mpirun for one process"));
  });
  return *entry;
}

}  // namespace

int launched_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
    if (const char* value = std::getenv(name)) {
      const int n = std::atoi(value);
      if (n > 0) return n;
    }
  }
  return 1;
}

std::optional<std::vector<PointResult>> predict_distributed(const Scenario& scenario,
                                                            const PredictOptions& options,
                                                            PredictStats* stats) {
  if (launched_processes() <= 1) return predict_scenario(scenario, options, stats);
  const MpiModule& mpi = load_mpi_module();
  int rank = 0, size = 1;
  mpi.init(&rank, &size);
  PredictStats mine;
  const std::string shard = predict_shard(
      scenario, options, Shard{static_cast<std::size_t>(rank), static_cast<std::size_t>(size)}, &mine);
  const std::vector<std::string> shards = mpi.gather(shard);
  const std::vector<std::string> counts =
      mpi.gather(fmt::format("{} {} {} {} {}", mine.schedules, mine.checked, mine.verified, mine.simulated,
                             mine.simulated_by_pattern));
  if (rank != 0) return std::nullopt;
  if (stats) {
    // Each process plans its own schedules: a schedule two processes both need counts twice.
    for (const std::string& c : counts) {
      std::istringstream in(c);
      std::size_t schedules = 0, checked = 0, verified = 0, simulated = 0, by_pattern = 0;
      in >> schedules >> checked >> verified >> simulated >> by_pattern;
      stats->schedules += schedules, stats->checked += checked, stats->verified += verified;
      stats->simulated += simulated, stats->simulated_by_pattern += by_pattern;
    }
  }
  return merge_shards(scenario, shards);
}

}  // namespace cclab::cli
