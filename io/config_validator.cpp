// Applies --set overrides to a parsed document and checks its sections against setting specs.
#include "io/config_validator.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "io/toml_text.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Accept the TOML spelling "@layers" as well as the shell-friendlier @layers.
std::string unquoted(const std::string& key) {
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') return key.substr(1, key.size() - 2);
  return key;
}

}  // namespace

Status apply_overrides(toml::table& document, const std::vector<std::string>& overrides,
                       const std::string& source, OverrideRecord& record) {
  for (const auto& override_text : overrides) {
    auto malformed = [&](const std::string& why) {
      return Error{source + ": --set \"" + echoed(override_text) + "\": " + why +
                   "; expected section.key=value, e.g. training.batch_size=64"};
    };
    const auto equals = override_text.find('=');
    if (equals == std::string::npos) return malformed("no '='");
    const auto path = trim(override_text.substr(0, equals));
    const auto dot = path.find('.');
    if (dot == std::string::npos) return malformed("no section before the key");
    const auto section_name = trim(path.substr(0, dot));
    auto key = trim(path.substr(dot + 1));
    // Accept the TOML spelling model."@layers" as well as the shell-friendlier model.@layers.
    if (key.find('.') == std::string::npos) key = unquoted(key);
    if (section_name.empty() || key.empty()) return malformed("empty section or key");

    const auto value_text = trim(override_text.substr(equals + 1));
    const std::string value_document = "v = " + value_text;
    toml::table parsed_value;
    bool parsed_as_toml = true;
    try {
      parsed_value = toml::parse(std::string_view(value_document), std::string_view("--set"));
    } catch (const toml::parse_error&) {
      parsed_as_toml = false;  // a bare word such as async or a path: the text itself
    }
    const toml::node* value_node = parsed_as_toml ? parsed_value.get("v") : nullptr;

    toml::node* section_node = document.get(section_name);
    if (!section_node) {
      document.insert(section_name, toml::table{});
      record.created_sections.insert(section_name);
      section_node = document.get(section_name);
    }
    auto* section = section_node->as_table();
    if (!section)
      return Error{source + ": " + section_name + ": expected a table, got " + describe_node(*section_node) +
                   " (from --set \"" + echoed(override_text) + "\")"};
    // One level of sub-table: optimizer.learn_rate.initial_rate sets [optimizer.learn_rate] initial_rate.
    if (const auto sub_dot = key.find('.'); sub_dot != std::string::npos) {
      const auto sub_name = unquoted(trim(key.substr(0, sub_dot)));
      const auto sub_key = unquoted(trim(key.substr(sub_dot + 1)));
      if (sub_name.empty() || sub_key.empty() || sub_key.find('.') != std::string::npos)
        return malformed("at most section.table.key");
      auto* sub_node = section->get(sub_name);
      if (!sub_node || !sub_node->is_table()) {
        section->insert_or_assign(sub_name, toml::table{});
        sub_node = section->get(sub_name);
      }
      section = sub_node->as_table();
      key = sub_name + "." + sub_key;  // the recorded path
      if (value_node) section->insert_or_assign(sub_key, *value_node);
      else section->insert_or_assign(sub_key, value_text);
      record.paths.insert(section_name + "." + key);
      continue;
    }
    if (value_node) section->insert_or_assign(key, *value_node);
    else section->insert_or_assign(key, value_text);
    record.paths.insert(section_name + "." + key);
  }
  return success();
}

void apply_flag(toml::table& document, const std::string& flag, const std::string& path, const SettingValue& value,
                OverrideRecord& record) {
  const auto dot = path.find('.');
  const auto section_name = path.substr(0, dot);
  const auto key = path.substr(dot + 1);
  auto* section = document.get_as<toml::table>(section_name);
  if (!section) {
    document.insert_or_assign(section_name, toml::table{});
    record.created_sections.insert(section_name);
    section = document.get_as<toml::table>(section_name);
  }
  std::visit(
      [&](const auto& held) {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          toml::array list;
          for (const auto x : held) list.push_back(x);
          section->insert_or_assign(key, std::move(list));
        } else {
          section->insert_or_assign(key, held);
        }
      },
      value);
  record.flags[path] = flag;
}

Error Validator::fail(const std::string& path, const std::string& problem) const {
  // A section-level problem (an unknown section) came from --set if any key set there did.
  const auto& paths = overrides_.paths;
  const bool from_override = paths.count(path) > 0 || std::any_of(paths.begin(), paths.end(), [&](const auto& p) {
                               return p.rfind(path + ".", 0) == 0;
                             });
  const auto flag = overrides_.flags.find(path);
  const std::string origin = flag != overrides_.flags.end() ? " (from " + flag->second + ")"
                             : from_override                ? " (from --set)"
                                                            : "";
  const auto written_as = locations_.written_as.find(path);
  const auto& shown = written_as == locations_.written_as.end() ? path : written_as->second;
  std::string at;
  // A key the file does not have (a missing setting) is placed at its section: "a.b.c" at [a.b] or [a].
  for (auto known = path; origin.empty();) {
    if (const auto line = locations_.lines.find(known); line != locations_.lines.end()) {
      at = ":" + std::to_string(line->second);
      break;
    }
    const auto dot = known.rfind('.');
    if (dot == std::string::npos) break;
    known.resize(dot);
  }
  const auto hint = locations_.hints.find(path);
  const auto hinted = origin.empty() && hint != locations_.hints.end() ? " (" + hint->second + ")" : "";
  return Error{source_ + at + ": " + echoed(shown) + ": " + problem + hinted + origin};
}

Result<Settings> Validator::read_settings(const toml::table* section, const std::string& section_name,
                                          const std::vector<SettingSpec>& specs,
                                          std::initializer_list<std::string> handled_keys,
                                          const std::string& owner) const {
  Settings settings;
  if (section) {
    for (const auto& [key_node, node] : *section) {
      const std::string key(key_node.str());
      if (std::find(handled_keys.begin(), handled_keys.end(), key) != handled_keys.end()) continue;
      const auto path = section_name + "." + key;
      auto spec = std::find_if(specs.begin(), specs.end(),
                               [&](const SettingSpec& s) { return s.name == key; });
      if (spec == specs.end()) {
        std::vector<std::string> known(handled_keys);
        for (const auto& s : specs) known.push_back(s.name);
        return fail(path, "unknown key; known keys of [" + section_name + "]" +
                              (owner.empty() ? "" : " for " + owner) + ": " + join(known));
      }
      auto value = to_setting_value(node);
      if (!value)
        return fail(path, "expected " + describe_expected(*spec) + ", got " + describe_node(node));
      // Numbers are stored as doubles whichever way they were written, so "1" and "1.0" give
      // equal configs and a rendered config reads back identical.
      if (spec->kind == SettingKind::number)
        if (auto* i = std::get_if<std::int64_t>(&*value)) value = SettingValue{static_cast<double>(*i)};
      if (auto expected = check_setting(*spec, *value))
        return fail(path, "expected " + *expected + ", got " + echoed(toml_text(*value)));
      settings.emplace(key, std::move(*value));
    }
  }
  if (auto missing = fill_defaults(specs, settings)) {
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const SettingSpec& s) { return s.name == *missing; });
    return fail(section_name + "." + *missing,
                "missing required setting" + (owner.empty() ? "" : " of " + owner) + "; expected " +
                    describe_expected(*spec));
  }
  return settings;
}

Result<std::string> Validator::read_registry_name(const toml::table* section, const std::string& section_name,
                                                  const std::string& key, const std::string& what,
                                                  const std::vector<std::string>& known_names,
                                                  const std::string& default_name) const {
  if (!section) return default_name;
  const auto path = section_name + "." + key;
  const auto expected = "a registered " + what + " name, one of " + quoted_list(known_names);
  const toml::node* node = section->get(key);
  if (!node && overrides_.created_sections.count(section_name)) return default_name;
  if (!node) return fail(path, "missing; [" + section_name + "] must name its " + what + ": " + expected);
  auto* name = node->as_string();
  if (!name) {
    auto value = to_setting_value(*node);
    return fail(path, "expected " + expected + ", got " + (value ? echoed(toml_text(*value)) : describe_node(*node)));
  }
  if (std::find(known_names.begin(), known_names.end(), name->get()) == known_names.end())
    return fail(path, "unknown " + what + "; expected " + expected + ", got " + echoed(toml_string(name->get())));
  return name->get();
}

}  // namespace psgrad
