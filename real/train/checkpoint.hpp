// Training checkpoints as files: written atomically (temporary file, fsync, rename, fsync of the directory),
// so a crash or a killed writer leaves the previous checkpoint intact and never a half-written one under the
// final name; guarded by a CRC-32 over everything before it, so truncation or corruption is refused with a
// clear error instead of loading garbage. Torch-free: the trainer hands over the serialized model and
// optimizer as bytes.
//
// File layout: "CCLABCKP" | u32 format version | u64 metadata length | metadata (JSON text) | u64 payload
// length | payload | u32 CRC-32 of all preceding bytes. Integers little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cclab::real::train {

struct Checkpoint {
  nlohmann::json metadata;  // step, epoch, world size, model, seed, ...
  std::string payload;      // serialized model and optimizer state
};

// Writes `dir`/ckpt-STEP.cclab atomically and removes all but the newest `keep` checkpoints of `dir`.
// Returns the path written. BackendError when the file system fails.
std::string write_checkpoint(const std::string& dir, std::uint64_t step, const Checkpoint& checkpoint,
                             int keep);

// Reads and validates a checkpoint file; `path` may also be a directory (its newest checkpoint). ConfigError
// naming the file and what is wrong (missing, not a checkpoint, truncated, checksum mismatch).
Checkpoint read_checkpoint(const std::string& path, std::string* resolved_path = nullptr);

// Checkpoint files of `dir`, oldest first.
std::vector<std::string> list_checkpoints(const std::string& dir);

}  // namespace cclab::real::train
