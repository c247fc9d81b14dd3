// Converts a Thinc config's tree into the TOML document that parse_config validates.
#include "io/thinc_document.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "io/thinc_config.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::string unquoted(const std::string& key) {
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') return key.substr(1, key.size() - 2);
  return key;
}

std::optional<ThincValue> from_toml(const toml::node& node) {
  ThincValue value;
  if (const auto* text = node.as_string()) value.data = text->get();
  else if (const auto* integer = node.as_integer()) value.data = static_cast<std::int64_t>(integer->get());
  else if (const auto* number = node.as_floating_point()) value.data = number->get();
  else if (const auto* flag = node.as_boolean()) value.data = flag->get();
  else if (const auto* array = node.as_array()) {
    ThincList list;
    for (const auto& element : *array) {
      auto converted = from_toml(element);
      if (!converted) return std::nullopt;
      list.push_back(std::move(*converted));
    }
    value.data = std::move(list);
  } else if (const auto* table = node.as_table()) {
    ThincTable entries;
    for (const auto& [key, element] : *table) {
      auto converted = from_toml(element);
      if (!converted) return std::nullopt;
      entries.set(std::string(key.str()), std::move(*converted));
    }
    value.data = std::move(entries);
  } else {
    return std::nullopt;  // dates and times: --set leaves them to the checks after reading
  }
  return value;
}

// "section.key=value" as apply_overrides reads it (a bare word is a string); what is malformed is left
// out here for apply_overrides to refuse.
std::vector<ThincPreset> presets_of(const std::vector<std::string>& overrides) {
  std::vector<ThincPreset> presets;
  for (const auto& text : overrides) {
    const auto equals = text.find('=');
    if (equals == std::string::npos) continue;
    const auto path = trimmed(text.substr(0, equals));
    const auto dot = path.rfind('.');
    if (dot == std::string::npos || dot == 0) continue;
    ThincPreset preset;
    preset.section = trimmed(path.substr(0, dot));
    preset.key = unquoted(trimmed(path.substr(dot + 1)));
    const auto value_text = trimmed(text.substr(equals + 1));
    try {
      const auto parsed = toml::parse("v = " + value_text);
      auto value = from_toml(*parsed.get("v"));
      if (!value) continue;
      preset.value = std::move(*value);
    } catch (const toml::parse_error&) {
      preset.value.data = value_text;
    }
    presets.push_back(std::move(preset));
  }
  return presets;
}

class Converter {
 public:
  Converter(const std::string& source, const ThincConfig& config) : source_(source), config_(config) {}

  Result<toml::table> table(const ThincTable& entries, const std::string& path) const {
    toml::table out;
    for (const auto& [key, value] : entries.entries()) {
      const auto key_path = path.empty() ? key : path + "." + key;
      auto node = converted(value, key_path);
      if (!node) return Error{node.error()};
      std::visit([&](auto&& held) { out.insert_or_assign(key, std::move(held)); }, std::move(*node));
    }
    return out;
  }

 private:
  using Node = std::variant<std::string, std::int64_t, double, bool, toml::array, toml::table>;

  Result<Node> converted(const ThincValue& value, const std::string& path) const {
    if (value.is_null())
      return fail(path, "null is not a value any setting takes; leave the key out for its default");
    if (const auto* text = value.text()) return Node{*text};
    if (const auto* integer = std::get_if<std::int64_t>(&value.data)) return Node{*integer};
    if (const auto* number = std::get_if<double>(&value.data)) return Node{*number};
    if (const auto* flag = std::get_if<bool>(&value.data)) return Node{*flag};
    if (const auto* entries = value.table()) {
      auto inner = table(*entries, path);
      if (!inner) return Error{inner.error()};
      return Node{std::move(*inner)};
    }
    toml::array array;
    for (const auto& element : *value.list()) {
      auto node = converted(element, path);
      if (!node) return Error{node.error()};
      std::visit([&](auto&& held) { array.push_back(std::move(held)); }, std::move(*node));
    }
    return Node{std::move(array)};
  }

  Error fail(const std::string& path, const std::string& problem) const {
    for (auto known = path;;) {  // the key's line, or its section's
      if (const auto line = config_.lines.find(known); line != config_.lines.end())
        return Error{fmt::format("{}:{}: {}: {}", source_, line->second, echoed(path), problem)};
      const auto dot = known.rfind('.');
      if (dot == std::string::npos) return Error{fmt::format("{}: {}: {}", source_, echoed(path), problem)};
      known.resize(dot);
    }
  }

  const std::string& source_;
  const ThincConfig& config_;
};

}  // namespace

Result<ConfigDocument> thinc_document(const std::string& text, const std::string& source,
                                      const std::vector<std::string>& read_sections,
                                      const std::vector<std::string>& overrides) {
  auto config = read_thinc_config(text, source, presets_of(overrides));
  if (!config) return Error{config.error()};
  for (const auto& name : config->referenced)
    if (std::find(read_sections.begin(), read_sections.end(), name) == read_sections.end())
      config->sections.erase(name);
  auto document = Converter(source, *config).table(config->sections, "");
  if (!document) return Error{document.error()};
  KeyLocations locations{config->lines, {}, {}};
  for (const auto& path : config->commented)
    locations.hints[path] = "Thinc's format has no comments after a value; put it on a line of its own";
  return ConfigDocument{std::move(*document), std::move(locations)};
}

}  // namespace psgrad
