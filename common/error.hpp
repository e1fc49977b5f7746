// The cclab exception family and the invariant macro. Policy (docs/conventions.md): user input errors are
// ConfigError naming file, line and field; a planner that cannot plan says so as a value (see
// engine/registry), PlanError is for schedules that break the IR's rules; BackendError is for failures of
// SimGrid, MPI, NCCL, CUDA.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

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

// User text quoted in an error message, cut to `max_chars` (with "...") so that a stray paste cannot bury the
// message.
inline std::string clip(std::string_view text, std::size_t max_chars = 80) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(text.substr(0, max_chars)) + "...";
}

// Throws the ConfigError every loader reports: "SOURCE:LINE: FIELD: MESSAGE" (without LINE when it is 0,
// unknown). Field and message are clipped, as they may quote the user's text.
[[noreturn]] void throw_input_error(std::string_view source, int line, std::string_view field,
                                    std::string_view message);

// A broken invariant: a bug in cclab, never the user's input (CCLAB_ENFORCE throws it).
class InternalError : public Error {
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
