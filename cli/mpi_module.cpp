// libcclab-mpi.so: the MPI calls of a distributed sweep (cli/distributed.hpp), in a module so that the
// `cclab` front links no MPI.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>

#include "cli/mpi_module.hpp"
#include "common/error.hpp"

namespace cclab::cli {
namespace {

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw BackendError(fmt::format("{} failed (MPI error {})", call, rc));
}

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// Once per process; MPI_Finalize at exit (regress gathers once per scenario).
void init(int* rank, int* size) {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (!initialized) {
    check(MPI_Init(nullptr, nullptr), "MPI_Init");
    std::atexit(finalize);
  }
  check(MPI_Comm_rank(MPI_COMM_WORLD, rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, size), "MPI_Comm_size");
}

std::vector<std::string> gather(const std::string& mine) {
  int rank = 0, size = 1;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  // Sizes first (a shard is far below 2 GiB: a point is a few hundred bytes per bucket), then the bytes.
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? size : 0), offsets(rank == 0 ? size : 0);
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::string all;
  if (rank == 0) {
    std::int64_t total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    CCLAB_ENFORCE(total < (1LL << 31), "the gathered results ({} bytes) exceed one MPI message", total);
    all.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE, 0,
                    MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> out;
  for (int r = 0; rank == 0 && r < size; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

}  // namespace
}  // namespace cclab::cli

extern "C" __attribute__((visibility("default"))) const void* cclab_mpi_module_entry_v1() {
  static const cclab::cli::MpiModule entry{&cclab::cli::init, &cclab::cli::gather};
  return &entry;
}
