// The memory guard: a command that would materialize more than a budget refuses up front, naming the bytes it
// would need and the way out, instead of being killed by the kernel halfway (docs/design.md, "The memory
// budget"). The budget defaults to a quarter of physical memory; CCLAB_MEMORY_BUDGET (a size: "6GiB") or a
// command's --memory-budget sets it.
#pragma once

#include <cstdint>
#include <string_view>

namespace cclab {

std::uint64_t memory_budget_bytes();
void set_memory_budget_bytes(std::uint64_t bytes);  // 0: back to the default

// Throws ConfigError when `bytes` exceeds the budget: "<what> needs <bytes>, more than the memory budget of
// <budget> (...); <way_out>".
void require_within_memory_budget(std::uint64_t bytes, std::string_view what, std::string_view way_out);

}  // namespace cclab
