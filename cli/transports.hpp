// The transports `cclab bench` and `cclab calibrate` run over, chosen by --transport.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "real/mpi_transport.hpp"

namespace cclab::cli {

// Runs an MPI command's body on every rank, with the errors handled as all of them must be: bad input
// (ConfigError, the same on every rank) is one line from rank 0 and exit status 1; a failed call or a dead
// peer (any other cclab::Error) is one line from the rank that saw it, then MPI_Abort so that no rank hangs.
// The body returns the exit status; non-zero becomes ExitStatus.
void run_under_mpi(const std::function<int(real::MpiWorld&)>& body);

// "mpi" (host buffers) or "nccl" (one GPU per rank; ConfigError where cclab was built without CUDA+NCCL).
std::unique_ptr<real::Transport> make_transport(const std::string& name, const real::MpiWorld& world);

inline constexpr const char* kTransportHelp =
    "mpi: host buffers over Open MPI; nccl: one GPU per rank (GPU = local rank), NCCL point-to-point";

}  // namespace cclab::cli
