#include "real/train/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/crc.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"

namespace cclab::real::train {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'C', 'C', 'L', 'A', 'B', 'C', 'K', 'P'};
constexpr std::uint32_t kVersion = 1;

template <typename T>
void put(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff));
}

template <typename T>
T get(const std::string& in, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return static_cast<T>(v);
}

std::uint32_t crc32(const char* data, std::size_t n) {
  boost::crc_32_type crc;
  crc.process_bytes(data, n);
  return crc.checksum();
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw BackendError(fmt::format("{}: cannot open for fsync: {}", path, std::strerror(errno)));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw BackendError(fmt::format("{}: fsync failed: {}", path, std::strerror(errno)));
}

bool is_checkpoint_name(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.rfind("ckpt-", 0) == 0 && p.extension() == ".cclab";
}

}  // namespace

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && is_checkpoint_name(entry.path())) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());  // zero-padded steps sort by name
  return files;
}

std::string write_checkpoint(const std::string& dir, std::uint64_t step, const Checkpoint& checkpoint,
                             int keep) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw BackendError(fmt::format("{}: cannot create the checkpoint directory: {}", dir, ec.message()));
  std::string bytes(kMagic, sizeof kMagic);
  put<std::uint32_t>(bytes, kVersion);
  const std::string meta = checkpoint.metadata.dump();
  put<std::uint64_t>(bytes, meta.size());
  bytes += meta;
  put<std::uint64_t>(bytes, checkpoint.payload.size());
  bytes += checkpoint.payload;
  put<std::uint32_t>(bytes, crc32(bytes.data(), bytes.size()));

  const std::string final_path = (fs::path(dir) / fmt::format("ckpt-{:09}.cclab", step)).string();
  const std::string temp_path = final_path + ".tmp";
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw BackendError(fmt::format("{}: write failed", temp_path));
  }
  fsync_path(temp_path, O_RDONLY);
  fs::rename(temp_path, final_path, ec);
  if (ec) throw BackendError(fmt::format("{}: rename failed: {}", final_path, ec.message()));
  fsync_path(dir, O_RDONLY | O_DIRECTORY);  // the rename itself survives a crash
  auto files = list_checkpoints(dir);
  for (std::size_t i = 0; i + static_cast<std::size_t>(std::max(keep, 1)) < files.size(); ++i)
    fs::remove(files[i], ec);
  return final_path;
}

Checkpoint read_checkpoint(const std::string& path_in, std::string* resolved_path) {
  std::string path = path_in;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const auto files = list_checkpoints(path);
    if (files.empty())
      throw ConfigError(fmt::format("--resume {}: no checkpoint (ckpt-*.cclab) there", path));
    path = files.back();
  }
  if (resolved_path) *resolved_path = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("checkpoint {}: cannot open", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  const auto refuse = [&](const std::string& why) {
    return ConfigError(fmt::format("checkpoint {}: {}; refusing to resume from it", path, why));
  };
  const std::size_t header = sizeof kMagic + 4 + 8;
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw refuse("not a cclab checkpoint (bad magic)");
  if (bytes.size() < header + 8 + 4) throw refuse(fmt::format("truncated ({} bytes)", bytes.size()));
  const auto version = get<std::uint32_t>(bytes, sizeof kMagic);
  if (version != kVersion)
    throw refuse(fmt::format("format version {} (this cclab reads {})", version, kVersion));
  const auto meta_size = get<std::uint64_t>(bytes, sizeof kMagic + 4);
  if (meta_size > bytes.size() - header - 8 - 4)
    throw refuse(fmt::format("truncated ({} bytes)", bytes.size()));
  const auto payload_size = get<std::uint64_t>(bytes, header + meta_size);
  const std::size_t expected = header + meta_size + 8 + payload_size + 4;
  if (payload_size > bytes.size() || bytes.size() != expected) {
    throw refuse(bytes.size() < expected ? fmt::format("truncated ({} of {} bytes)", bytes.size(), expected)
                                         : fmt::format("{} trailing bytes", bytes.size() - expected));
  }
  const auto stored = get<std::uint32_t>(bytes, expected - 4);
  const std::uint32_t actual = crc32(bytes.data(), expected - 4);
  if (stored != actual)
    throw refuse(fmt::format("checksum mismatch (stored {:08x}, computed {:08x}): the file is corrupted",
                             stored, actual));
  Checkpoint c;
  try {
    c.metadata = nlohmann::json::parse(bytes.substr(header, meta_size));
  } catch (const nlohmann::json::exception& e) {
    throw refuse(fmt::format("unreadable metadata: {}", e.what()));
  }
  c.payload = bytes.substr(header + meta_size + 8, payload_size);
  return c;
}

}  // namespace cclab::real::train
