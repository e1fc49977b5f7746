#include "cli/transports.hpp"

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "common/error.hpp"
#if CCLAB_HAVE_NCCL
#include "real/nccl_transport.hpp"
#endif

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

std::unique_ptr<real::Transport> make_transport(const std::string& name, const real::MpiWorld& world) {
  if (name == "mpi") return std::make_unique<real::MpiTransport>();
  if (name == "nccl") {
#if CCLAB_HAVE_NCCL
    return std::make_unique<real::NcclTransport>(world);
#else
    (void)world;
    throw ConfigError(
        "--transport nccl: this cclab was built without CUDA and NCCL (set CUDA_HOME / NCCL_HOME)");
#endif
  }
  throw ConfigError(fmt::format("--transport '{}' (valid: mpi, nccl)", name));
}

}  // namespace cclab::cli
