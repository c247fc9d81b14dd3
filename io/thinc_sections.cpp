// Reads the sections, keys and value texts of a Thinc config line by line, as configparser does.
#include "io/thinc_sections.hpp"

#include <fmt/format.h>

#include "io/user_text.hpp"

namespace psgrad {

namespace {

constexpr const char* kWhitespace = " \t\r\n\f\v";

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(kWhitespace) - first + 1);
}

std::string right_trimmed(const std::string& text) {
  const auto last = text.find_last_not_of(kWhitespace);
  return last == std::string::npos ? "" : text.substr(0, last + 1);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

const IniEntry* IniSection::find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries[it->second];
}

IniEntry* IniSection::find(const std::string& key) {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries[it->second];
}

IniEntry& IniSection::add(IniEntry entry) {
  index_[entry.key] = entries.size();
  entries.push_back(std::move(entry));
  return entries.back();
}

const IniSection* IniDocument::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &sections[it->second];
}

IniSection* IniDocument::find(const std::string& name) {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &sections[it->second];
}

IniSection& IniDocument::add(std::string name, int line) {
  index_[name] = sections.size();
  IniSection section;
  section.name = std::move(name);
  section.line = line;
  sections.push_back(std::move(section));
  return sections.back();
}

Result<IniDocument> read_ini(const std::string& text, const std::string& source) {
  IniDocument document;
  auto fail = [&](int line, const std::string& problem) {
    return Error{fmt::format("{}:{}: {}", source, line, problem)};
  };
  IniSection* section = nullptr;  // null before the first header
  bool in_defaults = false;       // [DEFAULT]: configparser's values for every section, which Thinc refuses
  IniEntry* value = nullptr;      // the value a continuation line extends; null after a header
  std::size_t indent_level = 0;
  const auto lines = split_lines(text);
  for (std::size_t index = 0; index < lines.size(); ++index) {
    const int number = static_cast<int>(index + 1);
    const auto& raw = lines[index];
    const auto line = trimmed(raw);
    const bool comment = !line.empty() && (line[0] == '#' || line[0] == ';');
    if (line.empty() || comment) {
      // A blank line may sit inside a value that continues after it; a comment line is dropped.
      if (!comment && value) value->text += "\n";
      continue;
    }
    const auto indent = raw.find_first_not_of(kWhitespace);
    if (value && indent > indent_level) {
      value->text += "\n" + line;
      continue;
    }
    indent_level = indent;
    const auto closing = line.rfind(']');
    if (line[0] == '[' && closing != std::string::npos && closing >= 2) {
      const auto name = line.substr(1, closing - 1);
      value = nullptr;
      in_defaults = name == "DEFAULT";
      if (in_defaults) continue;
      if (const auto* earlier = document.find(name))
        return fail(number,
                    fmt::format("section [{}] is written twice (first on line {})", echoed(name), earlier->line));
      section = &document.add(name, number);
      continue;
    }
    if (!section && !in_defaults)
      return fail(number, fmt::format("\"{}\" is outside any section; a Thinc config starts with a [section] header",
                                      echoed(line)));
    const auto delimiter = line.find_first_of("=:");
    if (delimiter == std::string::npos)
      return fail(number, fmt::format("expected key = value or a [section] header, got \"{}\"", echoed(line)));
    const auto key = right_trimmed(line.substr(0, delimiter));
    if (key.empty()) return fail(number, fmt::format("no key before '{}' in \"{}\"", line[delimiter], echoed(line)));
    if (in_defaults)
      return fail(number, fmt::format("DEFAULT.{}: values in [DEFAULT] are not supported (Thinc refuses them too); "
                                      "put them in a section",
                                      echoed(key)));
    if (const auto* earlier = section->find(key))
      return fail(number, fmt::format("{}.{}: written twice in [{}] (first on line {})", echoed(section->name),
                                      echoed(key), echoed(section->name), earlier->line));
    value = &section->add(IniEntry{key, trimmed(line.substr(delimiter + 1)), number});
  }
  // configparser drops the blank lines a value ends with.
  for (auto& each : document.sections)
    for (auto& entry : each.entries) entry.text = right_trimmed(entry.text);
  return document;
}

}  // namespace psgrad
