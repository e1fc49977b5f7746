// A transport by name, for the commands that run real ranks (bench, calibrate, train): "mpi" (host buffers)
// or "nccl" (one GPU per rank; ConfigError where cclab was built without CUDA and NCCL).
#pragma once

#include <memory>
#include <string>

#include "engine/exec/transport.hpp"
#include "real/mpi/transport.hpp"

namespace cclab::real {

std::unique_ptr<Transport> make_transport(const std::string& name, const MpiWorld& world);

inline constexpr const char* kTransportHelp =
    "mpi: host buffers over Open MPI; nccl: one GPU per rank (GPU = local rank), NCCL point-to-point";

}  // namespace cclab::real
