// What every harness checks about an input: it ends either in a valid object or in a clear error, and
// nothing else — no crash, no uncaught or foreign exception, no internal-error (a broken cclab invariant). A
// violation prints what was expected and aborts, which libFuzzer reports with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace cclab::fuzz {

[[noreturn]] void fail(std::string_view what, std::string_view detail);

inline void require(bool condition, std::string_view what, std::string_view detail = {}) {
  if (!condition) fail(what, detail);
}

// A user-input error must be a ConfigError (or PlanError, for schedules) whose message starts with
// `source:` (the file it names) — unless `source` is empty (the unit parsers, whose callers add it).
void check_user_error(const Error& error, std::string_view source);

// Runs `load`; returns its value, or nullopt after checking that what it threw is a clear user error.
template <typename Load>
auto load_or_clear_error(std::string_view source, Load&& load) -> std::optional<decltype(load())> {
  try {
    return load();
  } catch (const Error& e) {
    check_user_error(e, source);
  } catch (const std::exception& e) {
    fail("an exception that is not a cclab error escaped the loader", e.what());
  }
  return std::nullopt;
}

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace cclab::fuzz
