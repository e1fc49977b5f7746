// The cclab exception family and the invariant macro. Policy (docs/conventions.md): user input errors are
// ConfigError naming file, line and field; a planner that cannot plan says so as a value (see
// engine/registry), PlanError is for schedules that break the IR's rules; BackendError is for failures of
// SimGrid, MPI, NCCL, CUDA.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace cclab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input: topology, scenario or schedule files, CLI values.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A schedule that is malformed, or fails verification.
class PlanError : public Error {
 public:
  using Error::Error;
};

// A failure reported by an execution backend.
class BackendError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_invariant(const char* condition, const char* file, int line,
                                  const std::string& message);

}  // namespace cclab

// Invariant check that stays on in Release builds: a broken invariant is a bug in cclab, never user input.
#define CCLAB_ENFORCE(cond, ...)                                                                  \
  do {                                                                                            \
    if (!(cond)) ::cclab::throw_invariant(#cond, __FILE__, __LINE__, ::fmt::format(__VA_ARGS__)); \
  } while (0)
