// Writes setting values as TOML text and names TOML values for one-line config errors.
#include "io/toml_text.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace psgrad {

namespace {

std::string type_name(toml::node_type type, bool plural = false) {
  switch (type) {
    case toml::node_type::table: return plural ? "tables" : "a table";
    case toml::node_type::array: return plural ? "arrays" : "an array";
    case toml::node_type::string: return plural ? "strings" : "a string";
    case toml::node_type::integer: return plural ? "integers" : "an integer";
    case toml::node_type::floating_point: return plural ? "floats" : "a float";
    case toml::node_type::boolean: return plural ? "booleans" : "a boolean";
    case toml::node_type::date: return plural ? "dates" : "a date";
    case toml::node_type::time: return plural ? "times" : "a time";
    case toml::node_type::date_time: return plural ? "date-times" : "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

}  // namespace

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04X}", c);
        else out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// fmt's "{}" is the shortest text that reads back as the same double, so rendered configs stay
// readable (0.2, not 0.20000000000000001) and still round-trip exactly; TOML needs a '.' or exponent
// to keep a float a float.
std::string toml_number(double x) {
  auto text = fmt::format("{}", x);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // 'n': inf, nan
  return text;
}

std::string toml_text(const SettingValue& value) {
  if (auto* d = std::get_if<double>(&value)) return toml_number(*d);
  if (auto* s = std::get_if<std::string>(&value)) return toml_string(*s);
  return to_text(value);
}

std::string toml_key(const std::string& key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
  return bare ? key : toml_string(key);
}

std::string describe_node(const toml::node& node) {
  if (auto* array = node.as_array()) {
    if (array->empty()) return "an empty array";
    if (array->is_homogeneous(toml::node_type::none))  // none: all elements share one type
      return "an array of " + type_name(array->front().type(), true);
    return "a mixed array";
  }
  return type_name(node.type());
}

std::optional<SettingValue> to_setting_value(const toml::node& node) {
  if (auto* b = node.as_boolean()) return SettingValue{b->get()};
  if (auto* i = node.as_integer()) return SettingValue{static_cast<std::int64_t>(i->get())};
  if (auto* d = node.as_floating_point()) return SettingValue{d->get()};
  if (auto* s = node.as_string()) return SettingValue{s->get()};
  if (auto* array = node.as_array()) {
    std::vector<std::int64_t> list;
    for (const auto& element : *array) {
      auto* i = element.as_integer();
      if (!i) return std::nullopt;
      list.push_back(i->get());
    }
    return SettingValue{std::move(list)};
  }
  return std::nullopt;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? separator : "") + items[i];
  return text;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& item : items) quoted.push_back("\"" + item + "\"");
  return join(quoted);
}

}  // namespace psgrad
