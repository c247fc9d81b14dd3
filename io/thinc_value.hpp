// Values of a Thinc config: the JSON-like tree its keys hold, read and written by Thinc's rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

struct ThincValue;
using ThincList = std::vector<ThincValue>;

// A section or a JSON object: keys in the order they were first set, as a Python dict keeps them.
class ThincTable {
 public:
  using Entry = std::pair<std::string, ThincValue>;
  ThincValue* find(const std::string& key);
  const ThincValue* find(const std::string& key) const;
  // Sets key, keeping its place when it was there.
  ThincValue& set(const std::string& key, ThincValue value);
  std::vector<Entry>& entries() { return entries_; }
  const std::vector<Entry>& entries() const { return entries_; }
  void erase(const std::string& key);

 private:
  std::vector<Entry> entries_;
  std::map<std::string, std::size_t> index_;
};

struct ThincValue {
  std::variant<std::monostate, bool, std::int64_t, double, std::string, ThincList, ThincTable> data;  // monostate: null

  bool is_null() const { return std::holds_alternative<std::monostate>(data); }
  const std::string* text() const { return std::get_if<std::string>(&data); }
  ThincList* list() { return std::get_if<ThincList>(&data); }
  const ThincList* list() const { return std::get_if<ThincList>(&data); }
  ThincTable* table() { return std::get_if<ThincTable>(&data); }
  const ThincTable* table() const { return std::get_if<ThincTable>(&data); }
};

// Reads text as Thinc does (srsly's ujson): standard JSON plus ujson's leniencies (leading zeros, "5.",
// "-.5", an exponent without digits). Nothing when the text is not JSON: Thinc then keeps it as a
// string. An error for an integer JSON allows but no setting can hold (above 2^63 - 1).
Result<std::optional<ThincValue>> parse_thinc_json(std::string_view text);

// The JSON spelling of a value (strings escaped, floats always with '.' or an exponent, infinities as
// Infinity), for other programs to read a tree with their own JSON reader.
std::string json_text(const ThincValue& value);

// How a config file must spell a value so Thinc reads it back as the same value: '$' doubled, and a
// string that would read as a number, list or other JSON value quoted twice ("\"1.5\"").
std::string thinc_text(const ThincValue& value);
ThincValue to_thinc_value(const SettingValue& value);

}  // namespace psgrad
