#include "real/transports.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#if CCLAB_HAVE_NCCL
#include "real/nccl/transport.hpp"
#endif

namespace cclab::real {

std::unique_ptr<Transport> make_transport(const std::string& name, const MpiWorld& world) {
  if (name == "mpi") return std::make_unique<MpiTransport>();
  if (name == "nccl") {
#if CCLAB_HAVE_NCCL
    return std::make_unique<NcclTransport>(world);
#else
    (void)world;
    throw ConfigError(
        "--transport nccl: this cclab was built without CUDA and NCCL (set CUDA_HOME / NCCL_HOME)");
#endif
  }
  throw ConfigError(fmt::format("--transport '{}' (valid: mpi, nccl)", name));
}

}  // namespace cclab::real
