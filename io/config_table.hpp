// One key of a fixed config section: its spec (type, default, limits, description) and the member of
// the section struct that holds its value. The sections' keys are declared once, in config_keys.cpp.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "io/config.hpp"
#include "model/enum_names.hpp"
#include "model/settings.hpp"
#include "model/training_mode.hpp"
#include "model/wire_encoding.hpp"

namespace psgrad::config_table {

// What a key's value is checked against besides its type.
struct Check {
  std::optional<double> minimum;
  std::optional<double> maximum;
  std::vector<std::string> choices;
  bool minimum_exclusive = false;
  bool maximum_exclusive = false;
};
inline Check at_least(double minimum) { return {minimum, std::nullopt, {}}; }
inline Check within(double minimum, double maximum) { return {minimum, maximum, {}}; }
inline Check one_of(std::vector<std::string> choices) { return {std::nullopt, std::nullopt, std::move(choices)}; }
inline Check share() { return {0.0, 1.0, {}, true}; }  // in (0, 1]
// Durations are at most 30 days: converted to CAF's nanosecond clock, far larger ones overflow and
// time out at once (request_timeout_ms = 2^63 - 1 dropped every worker on its first request).
inline constexpr double kMaxMilliseconds = 30.0 * 24 * 60 * 60 * 1000;
inline Check milliseconds_from(double minimum) { return within(minimum, kMaxMilliseconds); }
inline Check above(double minimum) { return {minimum, std::nullopt, {}, true, false}; }
inline Check from_below(double minimum, double maximum) { return {minimum, maximum, {}, false, true}; }

// The setting types a section member can have, both ways.
inline SettingValue to_value(std::int64_t x) { return SettingValue{x}; }
inline SettingValue to_value(std::uint64_t x) { return SettingValue{static_cast<std::int64_t>(x)}; }
inline SettingValue to_value(bool x) { return SettingValue{x}; }
inline SettingValue to_value(double x) { return SettingValue{x}; }
inline SettingValue to_value(const std::string& x) { return SettingValue{x}; }
inline void read_value(const Settings& settings, const std::string& name, std::int64_t& out) {
  out = get_integer(settings, name);
}
inline void read_value(const Settings& settings, const std::string& name, std::uint64_t& out) {
  out = static_cast<std::uint64_t>(get_integer(settings, name));  // its spec checks it is >= 0
}
inline void read_value(const Settings& settings, const std::string& name, bool& out) { out = get_boolean(settings, name); }
inline void read_value(const Settings& settings, const std::string& name, double& out) { out = get_number(settings, name); }
inline void read_value(const Settings& settings, const std::string& name, std::string& out) {
  out = get_text(settings, name);
}
// Durations are whole milliseconds in the file (the key's name ends in _ms).
inline SettingValue to_value(std::chrono::milliseconds x) { return SettingValue{static_cast<std::int64_t>(x.count())}; }
inline void read_value(const Settings& settings, const std::string& name, std::chrono::milliseconds& out) {
  out = std::chrono::milliseconds(get_integer(settings, name));
}
// Enumerations are their spellings in the file; the key's choices are those spellings.
inline const auto& spellings(TrainingMode) { return training_mode_names; }
inline const auto& spellings(WireEncoding) { return wire_encoding_names; }
template <class Enum, class = std::enable_if_t<std::is_enum_v<Enum>>>
SettingValue to_value(Enum x) { return SettingValue{name_in(spellings(x), x)}; }
template <class Enum, class = std::enable_if_t<std::is_enum_v<Enum>>>
void read_value(const Settings& settings, const std::string& name, Enum& out) {
  out = value_in(spellings(out), get_text(settings, name)).value();  // its spec checks the spelling
}

// One key of a fixed section: its spec, and the member of the section struct that holds its value.
template <class Section>
struct Key {
  SettingSpec spec;
  std::function<void(const Settings&, Section&)> read;
  std::function<SettingValue(const Section&)> value;
};

// The key's type follows from the member; its default is the struct's own, so it is written only there.
template <class Section, class Member>
Key<Section> key(const std::string& name, Member Section::*member, std::string description, Check check = {}) {
  Key<Section> entry;
  entry.read = [name, member](const Settings& settings, Section& section) { read_value(settings, name, section.*member); };
  entry.value = [member](const Section& section) { return to_value(section.*member); };
  auto& spec = entry.spec;
  spec.name = name;
  if constexpr (std::is_same_v<Member, bool>) spec.kind = SettingKind::boolean;
  else if constexpr (std::is_same_v<Member, std::string>) spec.kind = SettingKind::text;
  else if constexpr (std::is_enum_v<Member>) {
    spec.kind = SettingKind::text;
    check.choices = names_in(spellings(Member{}));
  }
  else if constexpr (std::is_same_v<Member, double>) spec.kind = SettingKind::number;
  else spec.kind = SettingKind::integer;
  spec.default_value = entry.value(Section{});
  spec.description = std::move(description);
  spec.minimum = check.minimum;
  spec.maximum = check.maximum;
  spec.minimum_exclusive = check.minimum_exclusive;
  spec.maximum_exclusive = check.maximum_exclusive;
  spec.choices = std::move(check.choices);
  return entry;
}

template <class Section>
class SectionTable {
 public:
  SectionTable(std::string name, std::vector<Key<Section>> keys) : name_(std::move(name)), keys_(std::move(keys)) {
    for (const auto& key : keys_) specs_.push_back(key.spec);
  }
  const std::string& name() const { return name_; }
  const std::vector<SettingSpec>& specs() const { return specs_; }
  void read(const Settings& settings, Section& section) const {
    for (const auto& key : keys_) key.read(settings, section);
  }
  Settings values(const Section& section) const {
    Settings settings;
    for (const auto& key : keys_) settings.emplace(key.spec.name, key.value(section));
    return settings;
  }

 private:
  std::string name_;
  std::vector<Key<Section>> keys_;
  std::vector<SettingSpec> specs_;
};

}  // namespace psgrad::config_table
