// Optional backends as modules loaded on first use (the SimGrid simulator, the MPI of distributed sweeps):
// the `cclab` front links neither, so that commands that never need them start in milliseconds.
#pragma once

#include <string>
#include <string_view>

namespace cclab {

// Opens `file` beside the executable (RTLD_LOCAL: the module's own copies of what it links stay private) and
// returns what its exported `entry` function returns. BackendError when it cannot: "`what` could not be
// loaded from PATH: REASON (`hint`)", or naming the missing entry. Callers cache the result (once per
// process).
const void* load_module_entry(std::string_view file, const char* entry, std::string_view what,
                              std::string_view hint);

}  // namespace cclab
