#include "common/error.hpp"

namespace cclab {

void throw_input_error(std::string_view source, int line, std::string_view field, std::string_view message) {
  if (line > 0)
    throw ConfigError(fmt::format("{}:{}: {}: {}", source, line, clip(field, 200), clip(message, 1000)));
  throw ConfigError(fmt::format("{}: {}: {}", source, clip(field, 200), clip(message, 1000)));
}

void throw_invariant(const char* condition, const char* file, int line, const std::string& message) {
  throw InternalError(fmt::format("internal error: {} ({}:{}: {})", message, file, line, condition));
}

}  // namespace cclab
