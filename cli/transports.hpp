// Running a command on every rank of an MPI world (bench, calibrate, train).
#pragma once

#include <functional>

#include "real/mpi/transport.hpp"

namespace cclab::cli {

// Runs an MPI command's body on every rank, with the errors handled as all of them must be: bad input
// (ConfigError, the same on every rank) is one line from rank 0 and exit status 1; a failed call or a dead
// peer (any other cclab::Error) is one line from the rank that saw it, then MPI_Abort so that no rank hangs.
// The body returns the exit status; non-zero becomes ExitStatus.
void run_under_mpi(const std::function<int(real::MpiWorld&)>& body);

}  // namespace cclab::cli
