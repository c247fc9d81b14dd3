// Tells a TOML config from a Thinc one by its file name, or else by the first construct only one reads.
#include "io/config_format.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

namespace psgrad {

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// "\"@layers\" = ..." or "'key' = ...": a key in quotes.
bool quoted_key(const std::string& line) {
  const char quote = line[0];
  if (quote != '"' && quote != '\'') return false;
  const auto close = line.find(quote, 1);
  if (close == std::string::npos) return false;
  const auto next = line.find_first_not_of(" \t", close + 1);
  return next != std::string::npos && line[next] == '=';
}

// A value TOML refuses but Thinc keeps as a string: a word that is not true, false, inf or nan.
bool bare_word(const std::string& value) {
  if (value.empty() || !std::isalpha(static_cast<unsigned char>(value[0]))) return false;
  for (const std::string word : {"true", "false", "inf", "nan"})
    if (starts_with(value, word.c_str()) &&
        (value.size() == word.size() || !std::isalnum(static_cast<unsigned char>(value[word.size()]))))
      return false;
  return true;
}

std::optional<ConfigFormat> decided_by(const std::string& line) {
  if (starts_with(line, "[[")) return ConfigFormat::toml;
  if (line[0] == '[') return std::nullopt;  // a section header: both
  if (line[0] == '@') return ConfigFormat::thinc;
  if (quoted_key(line)) return ConfigFormat::toml;
  if (line[0] == '"' || line[0] == '\'') return std::nullopt;  // a string inside a list or an object
  const auto delimiter = line.find_first_of("=:");
  if (delimiter == std::string::npos) return std::nullopt;  // a line inside a list
  if (line[delimiter] == ':') return ConfigFormat::thinc;
  const auto key = trimmed(line.substr(0, delimiter));
  if (key.find('.') != std::string::npos) return ConfigFormat::toml;
  const auto value = trimmed(line.substr(delimiter + 1));
  if (starts_with(value, "${") || bare_word(value)) return ConfigFormat::thinc;
  if (starts_with(value, "'") || starts_with(value, "\"\"\"")) return ConfigFormat::toml;
  if (starts_with(value, "{")) {
    const auto colon = value.find(':');
    const auto equals = value.find('=');
    if (equals < colon) return ConfigFormat::toml;
    if (colon < equals) return ConfigFormat::thinc;
  }
  return std::nullopt;
}

}  // namespace

ConfigFormat config_format(const std::string& source, const std::string& text) {
  const auto extension = lowercase(std::filesystem::path(source).extension().string());
  if (extension == ".toml") return ConfigFormat::toml;
  if (extension == ".cfg" || extension == ".ini") return ConfigFormat::thinc;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line = trimmed(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (const auto format = decided_by(line)) return *format;
  }
  return ConfigFormat::toml;
}

std::optional<ConfigFormat> config_format_named(const std::string& name) {
  if (name == "toml") return ConfigFormat::toml;
  if (name == "cfg") return ConfigFormat::thinc;
  return std::nullopt;
}

}  // namespace psgrad
