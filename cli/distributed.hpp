// Sweeps split over processes: `mpirun -np N cclab predict ...` (or `srun`) gives each process a shard of the
// scenario's points (engine/whatif/predict.hpp, Shard) and gathers the results on rank 0, which prints what a
// single process would have printed; the other ranks print nothing. MPI is the distributed engine: the
// `cclab` front does not link it (it starts in milliseconds), and loads libcclab-mpi.so (cli/mpi_module.cpp)
// only when the environment says it was started by an MPI launcher with more than one process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/mpi_module.hpp"
#include "engine/whatif/predict.hpp"

namespace cclab::cli {

// The number of processes the launcher started (Open MPI's OMPI_COMM_WORLD_SIZE, PMI_SIZE, Slurm's
// SLURM_NTASKS under srun); 1 when none.
int launched_processes();

// predict_scenario over every process of the launch: the results on rank 0 (stats summed over the ranks),
// nullopt on the others. Collective: every process calls it for the same scenarios in the same order. One
// process: predict_scenario itself, MPI never loaded.
std::optional<std::vector<PointResult>> predict_distributed(const Scenario& scenario,
                                                            const PredictOptions& options,
                                                            PredictStats* stats = nullptr);

}  // namespace cclab::cli
