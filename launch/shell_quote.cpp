#include "launch/shell_quote.hpp"

#include <cctype>

namespace psgrad {

namespace {

bool is_plain(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./:=@,+%").find(c) != std::string_view::npos;
}

}  // namespace

std::string shell_quoted(std::string_view text) {
  bool plain = !text.empty();
  for (char c : text) plain = plain && is_plain(c);
  if (plain) return std::string(text);
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string shell_command(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += ' ';
    out += shell_quoted(word);
  }
  return out;
}

}  // namespace psgrad
