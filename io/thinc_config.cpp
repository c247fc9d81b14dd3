// Thinc's Config().from_str in C++: values unquoted, references filled in, read as JSON, sections nested.
#include "io/thinc_config.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "io/thinc_interpolation.hpp"
#include "io/thinc_sections.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

// Copies of referenced sections are values too; a few hundred references to references would otherwise
// multiply into more than memory holds.
constexpr std::size_t kMaxCopiedValues = std::size_t{1} << 20;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// Thinc unquotes a value that is a JSON string before filling in references ("${a.b}" is ${a.b}), except
// "true", "false" and "null", which stay quoted so they stay strings.
std::string stored_value(const std::string& text) {
  auto parsed = parse_thinc_json(text);
  if (!parsed || !parsed->has_value()) return text;
  const auto* unquoted = (*parsed)->text();
  if (!unquoted || *unquoted == "true" || *unquoted == "false" || *unquoted == "null") return text;
  return *unquoted;
}

// Whether text holds a reference Thinc's VARIABLE_RE finds: ${ then word characters, '.' or ':', then }.
bool holds_variable(const std::string& text) {
  for (auto at = text.find("${"); at != std::string::npos; at = text.find("${", at + 1)) {
    auto end = at + 2;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                 text[end] == '.' || text[end] == ':'))
      ++end;
    if (end > at + 2 && end < text.size() && text[end] == '}') return true;
  }
  return false;
}

// "200 # steps": JSON, then what a TOML user meant as a comment.
bool trailing_comment(const std::string& text) {
  for (auto at = text.find_first_of("#;"); at != std::string::npos; at = text.find_first_of("#;", at + 1)) {
    if (at == 0 || (text[at - 1] != ' ' && text[at - 1] != '\t')) continue;
    auto parsed = parse_thinc_json(text.substr(0, at));
    if (parsed && parsed->has_value()) return true;
  }
  return false;
}

// A list's strings are read as JSON once more ("1" in a list is 1), nested lists too.
Status read_list_again(ThincList& list) {
  for (auto& element : list) {
    if (const auto* text = element.text()) {
      auto parsed = parse_thinc_json(*text);
      if (!parsed) return Error{parsed.error()};
      if (parsed->has_value() && !((*parsed)->text() && holds_variable(*text))) element = std::move(**parsed);
    }
    if (auto* inner = element.list())
      if (auto again = read_list_again(*inner); !again) return again;
  }
  return success();
}

Result<ThincValue> interpreted(const std::string& text) {
  auto parsed = parse_thinc_json(text);
  if (!parsed) return Error{parsed.error()};
  // A string that still holds a reference (from "$${a.b}") stays as written, quotes and all, as in Thinc.
  if (!parsed->has_value() || ((*parsed)->text() && holds_variable(text))) return ThincValue{text};
  auto value = std::move(**parsed);
  if (auto* list = value.list())
    if (auto again = read_list_again(*list); !again) return Error{again.error()};
  return value;
}

// Builds the tree of sections and replaces section references in it.
class Reader {
 public:
  Reader(std::string source, ThincConfig& config) : source_(std::move(source)), config_(config) {}

  Error fail(int line, const std::string& path, const std::string& problem) const {
    return Error{fmt::format("{}:{}: {}: {}", source_, line, echoed(path), problem)};
  }

  // [a.b.c]: the table c inside b inside a, each of which an earlier section made.
  Result<ThincTable*> section_table(const IniSection& section) {
    const auto parts = split(section.name, '.');
    const auto at = "[" + section.name + "]";
    ThincTable* table = &config_.sections;
    std::string prefix;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto& part = parts[i];
      prefix += (i ? "." : "") + part;
      auto* entry = table->find(part);
      // [a.*.b]: Thinc makes the table of positional arguments, "*", when its first entry needs it.
      if (!entry && i + 1 < parts.size() && part != "*")
        return fail(section.line, at,
                    fmt::format("section [{}] is not defined; a sub-section needs its parent first", echoed(prefix)));
      if (!entry) entry = &table->set(part, ThincValue{ThincTable{}});
      table = entry->table();
      if (!table) return fail(section.line, at, fmt::format("{} is already a value, not a section", echoed(prefix)));
    }
    return table;
  }

  // Replaces every "__SECTION__:a.b" with a copy of that section, its own references replaced too.
  Status resolve(ThincValue& value, const std::string& path, int line) {
    if (auto* table = value.table()) {
      for (auto& [key, entry] : table->entries()) {
        // Inside a copy of a section, problems are the reference's: they keep its key and line.
        const auto entry_path = in_progress_.empty() ? path + "." + key : path;
        const auto known = config_.lines.find(entry_path);
        if (auto resolved = resolve(entry, entry_path, known == config_.lines.end() ? line : known->second); !resolved)
          return resolved;
      }
      return success();
    }
    if (auto* list = value.list()) {  // as Thinc: a list's own elements, not those of lists inside it
      for (auto& element : *list)
        if (auto resolved = resolve_reference(element, path, line); !resolved) return resolved;
      return success();
    }
    return resolve_reference(value, path, line);
  }

 private:
  Status resolve_reference(ThincValue& value, const std::string& path, int line) {
    const auto* text = value.text();
    if (!text || text->find(kSectionReference) == std::string::npos) return success();
    std::string name = *text;
    if (name.rfind(std::string("\"") + kSectionReference, 0) == 0)
      if (auto parsed = parse_thinc_json(name); parsed && parsed->has_value() && (*parsed)->text())
        name = *(*parsed)->text();
    if (name.rfind(kSectionReference, 0) != 0)
      return fail(line, path, "a whole section (${section}) cannot be part of a string or a list inside a value");
    name = name.substr(std::string(kSectionReference).size());
    if (std::find(in_progress_.begin(), in_progress_.end(), name) != in_progress_.end())
      return fail(line, path, fmt::format("${{{}}} refers to a section that contains this reference", echoed(name)));
    auto cached = copies_.find(name);
    if (cached == copies_.end()) {
      ThincValue* target = nullptr;
      ThincTable* table = &config_.sections;
      for (const auto& part : split(name, '.')) {
        target = table ? table->find(part) : nullptr;
        table = target ? target->table() : nullptr;
      }
      if (!target) return fail(line, path, fmt::format("section [{}] is not defined", echoed(name)));
      ThincValue copy = *target;
      in_progress_.push_back(name);
      auto resolved = resolve(copy, path, line);
      in_progress_.pop_back();
      if (!resolved) return resolved;
      cached = copies_.emplace(name, std::move(copy)).first;
    }
    copied_ += count_values(cached->second);
    if (copied_ > kMaxCopiedValues)
      return fail(line, path, fmt::format("section references copy more than {} values", kMaxCopiedValues));
    value = cached->second;
    return success();
  }

  static std::size_t count_values(const ThincValue& value) {
    std::size_t count = 1;
    if (const auto* table = value.table())
      for (const auto& entry : table->entries()) count += count_values(entry.second);
    if (const auto* list = value.list())
      for (const auto& element : *list) count += count_values(element);
    return count;
  }

  std::string source_;
  ThincConfig& config_;
  std::vector<std::string> in_progress_;
  std::map<std::string, ThincValue> copies_;
  std::size_t copied_ = 0;
};

}  // namespace

Result<ThincConfig> read_thinc_config(const std::string& text, const std::string& source,
                                      const std::vector<ThincPreset>& presets) {
  auto ini = read_ini(text, source);
  if (!ini) return Error{ini.error()};
  for (const auto& preset : presets) {
    auto* section = ini->find(preset.section);
    // A value where the text has a sub-section would conflict with it; the document's overrides replace
    // the sub-section instead.
    if (!section || ini->find(preset.section + "." + preset.key)) continue;
    const auto written = thinc_text(preset.value);
    if (auto* entry = section->find(preset.key)) entry->text = written;
    else section->add(IniEntry{preset.key, written, section->line});
  }
  for (auto& section : ini->sections)
    for (auto& entry : section.entries) entry.text = stored_value(entry.text);

  ThincConfig config;
  Reader reader(source, config);
  ThincInterpolation interpolation(*ini);
  // Parents before their sub-sections, as Thinc reads them.
  std::vector<const IniSection*> ordered;
  for (const auto& section : ini->sections) ordered.push_back(&section);
  std::stable_sort(ordered.begin(), ordered.end(), [](const IniSection* a, const IniSection* b) {
    return std::count(a->name.begin(), a->name.end(), '.') < std::count(b->name.begin(), b->name.end(), '.');
  });
  for (const auto* section : ordered) {
    config.lines[section->name] = section->line;
    auto table = reader.section_table(*section);
    if (!table) return Error{table.error()};
    for (const auto& entry : section->entries) {
      const auto path = section->name + "." + entry.key;
      auto filled = interpolation.fill(section->name, entry.text);
      if (!filled) return reader.fail(entry.line, path, filled.error());
      auto value = interpreted(*filled);
      if (!value) return reader.fail(entry.line, path, value.error());
      if (value->text() && trailing_comment(*filled)) config.commented.insert(path);
      (*table)->set(entry.key, std::move(*value));
      config.lines[path] = entry.line;
    }
  }
  for (auto& [name, section] : config.sections.entries())
    if (auto resolved = reader.resolve(section, name, config.lines[name]); !resolved) return Error{resolved.error()};
  config.referenced = interpolation.referenced();
  return config;
}

}  // namespace psgrad
