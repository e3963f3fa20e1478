// How an error message repeats a value someone gave (a config value, an nnd_options_set
// string): 'token' when it is one short printable line, else only its size. Options may come
// from any file or caller, and their errors reach the journal, STATUS=, nnctl and
// nnd_last_error(): text that did not parse is never repeated in full.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

namespace nnd {

inline constexpr size_t kMaxQuotedBytes = 64;

inline bool short_printable(const std::string& token) {
  return token.size() <= kMaxQuotedBytes &&
         std::all_of(token.begin(), token.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
}

// The token without quotes, or "a value of N bytes".
inline std::string bare_value(const std::string& token) {
  return short_printable(token) ? token : "a value of " + std::to_string(token.size()) + " bytes";
}

// 'token', or "a value of N bytes".
inline std::string quote_value(const std::string& token) {
  return short_printable(token) ? "'" + token + "'" : bare_value(token);
}

}  // namespace nnd
