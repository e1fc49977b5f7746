// The seam between the `cclab` front and libcclab-mpi.so (cli/mpi_module.cpp), which the front loads to split
// a sweep over the processes of an MPI launch (cli/distributed.hpp). The module sees this header alone: it
// links MPI and nothing of the engine.
#pragma once

#include <string>
#include <vector>

namespace cclab::cli {

// What libcclab-mpi.so exports (looked up by name, versioned like the SimGrid module's entry).
struct MpiModule {
  // MPI_Init on the first call (MPI_Finalize at exit), then this process's rank and the world's size.
  void (*init)(int* rank, int* size);
  // Every rank's `mine`, in rank order, on rank 0; empty elsewhere. Collective.
  std::vector<std::string> (*gather)(const std::string& mine);
};
inline constexpr const char* kMpiModuleFile = "libcclab-mpi.so";
inline constexpr const char* kMpiModuleEntry = "cclab_mpi_module_entry_v1";

}  // namespace cclab::cli
