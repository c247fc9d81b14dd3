// Typed, documented settings that registered architectures and optimizers declare, so configs can be
// validated, defaulted and documented from one source.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace psgrad {

using SettingValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>>;

enum class SettingKind { boolean, integer, number, text, integer_list };

// What a setting accepts. Numbers are checked against [minimum, maximum] (maximum exclusive when
// maximum_exclusive is set); integer lists check each element against the same bounds.
struct SettingSpec {
  std::string name;
  SettingKind kind;
  std::optional<SettingValue> default_value;  // no default: the setting is required
  std::string description;
  std::optional<double> minimum;
  std::optional<double> maximum;
  bool maximum_exclusive = false;
  bool minimum_exclusive = false;
  std::vector<std::string> choices;  // for text settings; empty means any text
};

using Settings = std::map<std::string, SettingValue>;

// "an integer", "a number in [0, 1)", ... for error messages and documentation.
std::string describe_expected(const SettingSpec& spec);

// Empty when value fits spec, else what was expected.
std::optional<std::string> check_setting(const SettingSpec& spec, const SettingValue& value);

std::string to_text(const SettingValue& value);
std::string kind_name(SettingKind kind);

// Fills defaults for absent settings. Returns the name of the first required setting that is missing.
std::optional<std::string> fill_defaults(const std::vector<SettingSpec>& specs, Settings& settings);

// Typed getters for factories; the settings have been validated, so a missing or mistyped value is a
// programmer mistake and throws std::logic_error.
std::int64_t get_integer(const Settings& settings, const std::string& name);
double get_number(const Settings& settings, const std::string& name);
bool get_boolean(const Settings& settings, const std::string& name);
const std::string& get_text(const Settings& settings, const std::string& name);
const std::vector<std::int64_t>& get_integer_list(const Settings& settings, const std::string& name);

}  // namespace psgrad
