// The transports `cclab bench` and `cclab calibrate` run over, chosen by --transport.
#pragma once

#include <memory>
#include <string>

#include "real/mpi_transport.hpp"

namespace cclab::cli {

// "mpi" (host buffers) or "nccl" (one GPU per rank; ConfigError where cclab was built without CUDA+NCCL).
std::unique_ptr<real::Transport> make_transport(const std::string& name, const real::MpiWorld& world);

inline constexpr const char* kTransportHelp =
    "mpi: host buffers over Open MPI; nccl: one GPU per rank (GPU = local rank), NCCL point-to-point";

}  // namespace cclab::cli
