#include "cli/transports.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#if CCLAB_HAVE_NCCL
#include "real/nccl_transport.hpp"
#endif

namespace cclab::cli {

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
