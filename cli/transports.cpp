#include "cli/transports.hpp"

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/error.hpp"

namespace cclab::cli {

void run_under_mpi(const std::function<int(real::MpiWorld&)>& body) {
  int argc = 0;
  char** argv = nullptr;
  real::MpiWorld world(&argc, &argv);
  int code = 0;
  try {
    code = body(world);
  } catch (const ConfigError& e) {
    if (world.rank() == 0) fmt::print(stderr, "cclab: error: {}\n", e.what());
    code = 1;
  } catch (const Error& e) {
    fmt::print(stderr, "cclab: error: rank {}: {}\n", world.rank(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (code != 0) throw ExitStatus{code};
}

}  // namespace cclab::cli
