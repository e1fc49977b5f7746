// Reading the files users hand to cclab (topologies, scenarios, workloads, schedules). One reader, so that
// every loader refuses the same things the same way: a path that is not a regular file (a directory, a FIFO,
// /dev/zero would otherwise hang a loader or read as empty) and a file too large to be a hand-written input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cclab {

inline constexpr std::uint64_t kMaxInputFileBytes = 256ULL << 20;

// The whole text of `path`. Throws ConfigError "PATH: cannot read the WHAT file: REASON".
std::string read_input_file(const std::string& path, std::string_view what,
                            std::uint64_t max_bytes = kMaxInputFileBytes);

// Writes `text` to `path` (created or truncated). Throws ConfigError "PATH: cannot write the WHAT".
void write_output_file(const std::string& path, std::string_view text, std::string_view what);

// A file shipped beside the running executable (cclab's sibling programs and modules: build/ or an install's
// bin/), found through /proc/self/exe so that neither PATH nor the working directory matters; just `name`
// (left to PATH or the loader's search) where that link cannot be read.
std::string beside_executable(std::string_view name);

}  // namespace cclab
