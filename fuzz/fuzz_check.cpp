#include "fuzz/fuzz_check.hpp"

#include <cstdio>
#include <cstdlib>

namespace cclab::fuzz {

void fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "\nFUZZ FINDING: %.*s\n  %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

void check_user_error(const Error& error, std::string_view source) {
  const std::string_view message = error.what();
  require(dynamic_cast<const InternalError*>(&error) == nullptr, "a cclab invariant broke", message);
  require(dynamic_cast<const ConfigError*>(&error) != nullptr ||
              dynamic_cast<const PlanError*>(&error) != nullptr,
          "an input error that is not a ConfigError or PlanError", message);
  if (!source.empty()) {
    const std::string prefix = std::string(source) + ":";
    require(message.starts_with(prefix), "an input error that does not name the file", message);
  }
  require(message.size() < 4096, "an error message too long to read", message.substr(0, 200));
}

}  // namespace cclab::fuzz
