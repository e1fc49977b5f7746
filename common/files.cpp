#include "common/files.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/error.hpp"
#include "common/units.hpp"

namespace cclab {

std::string read_input_file(const std::string& path, std::string_view what, std::uint64_t max_bytes) {
  auto fail = [&](std::string_view reason) {
    return ConfigError(fmt::format("{}: cannot read the {} file: {}", path, what, reason));
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) throw fail("no such file");
  if (ec) throw fail(ec.message());  // a name too long, a directory on the way without permission, ...
  if (!std::filesystem::is_regular_file(status)) {
    throw fail(std::filesystem::is_directory(status) ? "it is a directory" : "it is not a regular file");
  }
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw fail(ec.message());
  if (size > max_bytes) {
    throw fail(fmt::format("it has {} bytes, more than the {} an input file may have", size,
                           format_size(max_bytes)));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw fail("permission denied or unreadable");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw fail("read error");
  return std::move(text).str();
}

std::string beside_executable(std::string_view name) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return std::string(name);
  return (self.parent_path() / name).string();
}

void write_output_file(const std::string& path, std::string_view text, std::string_view what) {
  std::ofstream out(path);
  out << text;
  if (!out) throw ConfigError(fmt::format("{}: cannot write the {}", path, what));
}

}  // namespace cclab
