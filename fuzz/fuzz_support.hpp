#pragma once
// What every fuzz target shares: the input as text, and the one outcome a reader may have besides
// success, an InputError (exit 2 with file, line and field). Any other exception escapes the
// target and libFuzzer reports it as a crash: that is the "exit 1, internal error" of the CLI.
// Out-of-memory (libFuzzer's -rss_limit_mb and -malloc_limit_mb) and slow inputs (-timeout) are
// reported by libFuzzer itself.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hw/catalog.hpp"

namespace gf::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::builtin();
  return c;
}

// Runs `f`; an InputError is the expected way to refuse bad input, and must say where.
template <typename F>
int expect_clean(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    // The message is what the user reads: it must be printable as JSON-safe text too.
    (void)nlohmann::json(std::string(e.what())).dump();
  }
  return 0;
}

// Output that reaches JSON must be valid UTF-8: dump() throws (a crash here) otherwise.
inline void dump(const nlohmann::json& j) { (void)j.dump(); }

}  // namespace gf::fuzz
