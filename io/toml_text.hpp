// TOML spelling of setting values and keys, and how TOML values are named in messages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "model/settings.hpp"

namespace psgrad {

// A TOML basic string, escaped so any text (Windows paths, quotes) survives a round trip.
std::string toml_string(const std::string& text);
// The shortest text that reads back as the same double, always with a '.' or exponent (1.0, 0.2, 1e-08).
std::string toml_number(double x);
std::string toml_text(const SettingValue& value);
// A key as TOML needs it written: "@layers" must be quoted, plain names must not be.
std::string toml_key(const std::string& key);

// "an integer", "an array of strings", "a mixed array": a TOML value that fits no setting, in words.
std::string describe_node(const toml::node& node);
// The setting value a TOML value holds; nothing for tables, dates and arrays of anything but integers.
std::optional<SettingValue> to_setting_value(const toml::node& node);

// "a, b, c"
std::string join(const std::vector<std::string>& items, const char* separator = ", ");
// "\"a\", \"b\""
std::string quoted_list(const std::vector<std::string>& items);

}  // namespace psgrad
