// Name tables for enums that appear in files and on the command line: one table per enum, looked up both
// ways.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cclab {

template <typename E, std::size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

template <typename E, std::size_t N>
constexpr std::string_view name_of(const NameTable<E, N>& table, E value) {
  for (auto [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <typename E, std::size_t N>
constexpr std::optional<E> value_of(const NameTable<E, N>& table, std::string_view text) {
  for (auto [v, name] : table)
    if (name == text) return v;
  return std::nullopt;
}

// `text` in ASCII lower case: names the user may type in any case (NCCL_ALGO and NCCL_PROTO values).
inline std::string ascii_lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A value in the syntax of NCCL_ALGO and NCCL_PROTO (NCCL's environment documentation): a comma-separated
// list of names, or with a leading '^' the names to leave out of the whole set. Names come back lower-cased;
// whether each is a name at all is for the caller, which knows the vocabulary.
struct NcclNameList {
  bool excluding = false;
  std::vector<std::string> names;
};

inline NcclNameList parse_nccl_name_list(std::string_view value) {
  NcclNameList list;
  list.excluding = value.starts_with('^');
  if (list.excluding) value.remove_prefix(1);
  for (std::size_t start = 0; start <= value.size();) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    list.names.push_back(ascii_lowercase(value.substr(start, comma - start)));
    start = comma + 1;
  }
  return list;
}

}  // namespace cclab
