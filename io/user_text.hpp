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

}  // namespace psgrad
