// User input as messages echo it: at most about 200 characters, the rest cut with "...", and control
// characters escaped, so a huge --set value or key still gives one short, readable line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace psgrad {

constexpr std::size_t echoed_text_limit = 200;

inline std::string echoed(std::string_view text, std::size_t limit = echoed_text_limit) {
  std::string out;
  std::size_t i = 0;
  for (; i < text.size() && out.size() < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  if (i == text.size()) return out;
  // Never end inside a UTF-8 sequence: drop its lead and continuation bytes.
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0xC0) out.pop_back();
  return out + "...";
}

// A message as printed: every run of more than `limit` non-blank characters (a path, a host name or a
// value that came from the user and was echoed whole) cut as echoed() cuts it, so a line stays short
// whichever value deep inside psgrad put it there.
// Words a little longer than the limit stay whole: a value echoed() already cut, with the quote or colon
// around it.
inline std::string cut_long_words(std::string_view line, std::size_t limit = echoed_text_limit) {
  std::string out;
  std::size_t at = 0;
  while (at < line.size()) {
    const auto blank = line.find_first_of(" \n\t", at);
    const auto end = blank == std::string_view::npos ? line.size() : blank;
    const auto word = line.substr(at, end - at);
    out += word.size() > limit + 20 ? echoed(word, limit) : std::string(word);
    if (end < line.size()) out += line[end];
    at = end + 1;
  }
  return out;
}

}  // namespace psgrad
