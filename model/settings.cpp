#include "model/settings.hpp"

#include <cmath>

#include <fmt/format.h>
#include <sstream>
#include <stdexcept>

namespace psgrad {

std::string kind_name(SettingKind kind) {
  switch (kind) {
    case SettingKind::boolean: return "a boolean";
    case SettingKind::integer: return "an integer";
    case SettingKind::number: return "a number";
    case SettingKind::text: return "a string";
    case SettingKind::integer_list: return "an array of integers";
  }
  return "a value";
}

namespace {

std::string format_bound(double x) { return fmt::format("{}", x); }

bool within(const SettingSpec& spec, double x) {
  if (spec.minimum && (spec.minimum_exclusive ? x <= *spec.minimum : x < *spec.minimum)) return false;
  if (spec.maximum && (spec.maximum_exclusive ? x >= *spec.maximum : x > *spec.maximum)) return false;
  return std::isfinite(x);
}

}  // namespace

std::string describe_expected(const SettingSpec& spec) {
  std::string text = kind_name(spec.kind);
  if (spec.kind == SettingKind::integer_list) text = "an array of integers";
  if (spec.minimum || spec.maximum) {
    if (spec.kind == SettingKind::integer_list) text += " each";
    if (spec.minimum && spec.maximum) {
      text += " in " + std::string(spec.minimum_exclusive ? "(" : "[") + format_bound(*spec.minimum) +
              ", " + format_bound(*spec.maximum) + (spec.maximum_exclusive ? ")" : "]");
    } else if (spec.minimum) {
      text += (spec.minimum_exclusive ? " > " : " >= ") + format_bound(*spec.minimum);
    } else {
      text += (spec.maximum_exclusive ? " < " : " <= ") + format_bound(*spec.maximum);
    }
  }
  if (!spec.choices.empty()) {
    text += ", one of";
    for (std::size_t i = 0; i < spec.choices.size(); ++i)
      text += (i ? ", \"" : " \"") + spec.choices[i] + "\"";
  }
  return text;
}

std::optional<std::string> check_setting(const SettingSpec& spec, const SettingValue& value) {
  const auto expected = describe_expected(spec);
  switch (spec.kind) {
    case SettingKind::boolean:
      if (!std::holds_alternative<bool>(value)) return expected;
      return std::nullopt;
    case SettingKind::integer:
      if (!std::holds_alternative<std::int64_t>(value)) return expected;
      if (!within(spec, static_cast<double>(std::get<std::int64_t>(value)))) return expected;
      return std::nullopt;
    case SettingKind::number: {
      double x;
      if (auto* i = std::get_if<std::int64_t>(&value)) x = static_cast<double>(*i);
      else if (auto* d = std::get_if<double>(&value)) x = *d;
      else return expected;
      if (!within(spec, x)) return expected;
      return std::nullopt;
    }
    case SettingKind::text: {
      auto* text = std::get_if<std::string>(&value);
      if (!text) return expected;
      if (!spec.choices.empty()) {
        for (const auto& choice : spec.choices)
          if (choice == *text) return std::nullopt;
        return expected;
      }
      return std::nullopt;
    }
    case SettingKind::integer_list: {
      auto* list = std::get_if<std::vector<std::int64_t>>(&value);
      if (!list || list->empty()) return "a non-empty " + expected.substr(3);
      for (auto x : *list)
        if (!within(spec, static_cast<double>(x))) return expected;
      return std::nullopt;
    }
  }
  return expected;
}

std::string to_text(const SettingValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      std::ostringstream out;
      out.precision(17);
      out << d;
      auto text = out.str();
      if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
      return text;
    }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(const std::vector<std::int64_t>& list) const {
      std::string text = "[";
      for (std::size_t i = 0; i < list.size(); ++i) text += (i ? ", " : "") + std::to_string(list[i]);
      return text + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

std::optional<std::string> fill_defaults(const std::vector<SettingSpec>& specs, Settings& settings) {
  for (const auto& spec : specs) {
    if (settings.count(spec.name)) continue;
    if (!spec.default_value) return spec.name;
    settings.emplace(spec.name, *spec.default_value);
  }
  return std::nullopt;
}

namespace {
const SettingValue& find_setting(const Settings& settings, const std::string& name) {
  auto it = settings.find(name);
  if (it == settings.end()) throw std::logic_error("setting '" + name + "' was not filled in");
  return it->second;
}
}  // namespace

std::int64_t get_integer(const Settings& settings, const std::string& name) {
  return std::get<std::int64_t>(find_setting(settings, name));
}

double get_number(const Settings& settings, const std::string& name) {
  const auto& value = find_setting(settings, name);
  if (auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  return std::get<double>(value);
}

bool get_boolean(const Settings& settings, const std::string& name) {
  return std::get<bool>(find_setting(settings, name));
}

const std::string& get_text(const Settings& settings, const std::string& name) {
  return std::get<std::string>(find_setting(settings, name));
}

const std::vector<std::int64_t>& get_integer_list(const Settings& settings, const std::string& name) {
  return std::get<std::vector<std::int64_t>>(find_setting(settings, name));
}

}  // namespace psgrad
