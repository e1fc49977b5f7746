#include "common/memory.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace cclab {
namespace {

std::atomic<std::uint64_t> g_budget_bytes{0};  // 0: not set, use the default

std::uint64_t default_budget_bytes() {
  if (const char* text = std::getenv("CCLAB_MEMORY_BUDGET"); text && *text) {
    try {
      return parse_size_bytes(text);
    } catch (const Error& e) {
      throw ConfigError(fmt::format("CCLAB_MEMORY_BUDGET='{}': {}", text, e.what()));
    }
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return std::uint64_t{4} << 30;  // unknown: 4 GiB
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes) / 4;
}

}  // namespace

std::uint64_t memory_budget_bytes() {
  const std::uint64_t set = g_budget_bytes.load();
  return set != 0 ? set : default_budget_bytes();
}

void set_memory_budget_bytes(std::uint64_t bytes) {
  g_budget_bytes.store(bytes);
}

void require_within_memory_budget(std::uint64_t bytes, std::string_view what, std::string_view way_out) {
  const std::uint64_t budget = memory_budget_bytes();
  if (bytes <= budget) return;
  throw ConfigError(
      fmt::format("{} needs about {:.1f} GB, more than the memory budget of {:.1f} GB "
                  "(--memory-budget or CCLAB_MEMORY_BUDGET; default a quarter of RAM); {}",
                  what, bytes / 1e9, budget / 1e9, way_out));
}

}  // namespace cclab
