// An enum's spellings in one table, read both ways: a value's name, and the value a name spells.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace psgrad {

template <class Enum>
struct EnumName {
  Enum value;
  const char* name;
};

// The name of `value`; the first entry's for a value the table lacks (an integer cast to the enum).
template <class Enum, std::size_t N>
std::string name_in(const EnumName<Enum> (&names)[N], Enum value) {
  for (const auto& entry : names)
    if (entry.value == value) return entry.name;
  return names[0].name;
}

// The value `text` spells; nothing for any other text.
template <class Enum, std::size_t N>
std::optional<Enum> value_in(const EnumName<Enum> (&names)[N], std::string_view text) {
  for (const auto& entry : names)
    if (text == entry.name) return entry.value;
  return std::nullopt;
}

// Every spelling, in table order: the choices a config key offers.
template <class Enum, std::size_t N>
std::vector<std::string> names_in(const EnumName<Enum> (&names)[N]) {
  std::vector<std::string> all;
  for (const auto& entry : names) all.emplace_back(entry.name);
  return all;
}

}  // namespace psgrad
