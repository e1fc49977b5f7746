#include "common/error.hpp"

namespace cclab {

void throw_invariant(const char* condition, const char* file, int line, const std::string& message) {
  throw Error(fmt::format("internal error: {} ({}:{}: {})", message, file, line, condition));
}

}  // namespace cclab
