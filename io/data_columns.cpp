// [data.columns]: a TOML table of column name = kind, or of column name = { kind = "ids", max_id = N }.
#include "io/data_columns.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "io/config.hpp"
#include "io/config_validator.hpp"
#include "io/toml_text.hpp"
#include "io/user_text.hpp"

namespace psgrad {

const char* const data_columns_expected =
    "a table of column name = \"ids\", \"text\" or \"number\" (or { kind = \"ids\", max_id = N })";
const char* const data_columns_description =
    "Named columns of a JSON Lines, CSV or TSV file (data.path), each an input: \"ids\" an integer id or a "
    "string (string-hashed), or a list of them; \"text\" split on whitespace, each token string-hashed; "
    "\"number\" one float. { kind = \"ids\", max_id = N } refuses integer ids above N. data.label names "
    "the label's column. Columns are taken in name order.";

namespace {

constexpr const char* kKindKey = "kind";
constexpr const char* kMaxIdKey = "max_id";

std::string kind_choices() { return quoted_list(names_in(column_kind_names)); }

Result<ColumnKind> read_kind(const toml::node& node, const std::string& path, const Validator& validator) {
  const auto* text = node.as_string();
  if (!text) return validator.fail(path, "expected one of " + kind_choices() + ", got " + describe_node(node));
  const auto kind = value_in(column_kind_names, text->get());
  if (!kind)
    return validator.fail(path, "expected one of " + kind_choices() + ", got " + echoed(toml_string(text->get())));
  return *kind;
}

// { kind = "ids", max_id = N }
Result<DataColumn> read_column_table(DataColumn column, const toml::table& table, const std::string& path,
                                     const Validator& validator) {
  for (const auto& [key_node, node] : table) {
    const std::string key(key_node.str());
    if (key != kKindKey && key != kMaxIdKey)
      return validator.fail(path + "." + key, fmt::format("unknown key; known keys of a column: {}, {}", kKindKey,
                                                          kMaxIdKey));
  }
  const auto* kind_node = table.get(kKindKey);
  if (!kind_node) return validator.fail(path + "." + kKindKey, "missing; expected one of " + kind_choices());
  auto kind = read_kind(*kind_node, path + "." + kKindKey, validator);
  if (!kind) return Error{kind.error()};
  column.kind = *kind;
  if (const auto* max_node = table.get(kMaxIdKey)) {
    const auto max_path = path + "." + kMaxIdKey;
    if (column.kind != ColumnKind::ids)
      return validator.fail(max_path, fmt::format("only an \"ids\" column takes {}; this one is \"{}\"", kMaxIdKey,
                                                  name_in(column_kind_names, column.kind)));
    const auto* max_id = max_node->as_integer();
    if (!max_id) return validator.fail(max_path, "expected an integer of at least 0, got " + describe_node(*max_node));
    if (max_id->get() < 0)
      return validator.fail(max_path, fmt::format("expected an integer of at least 0, got {}", max_id->get()));
    column.max_id = static_cast<std::uint64_t>(max_id->get());
  }
  return column;
}

Result<DataColumn> read_column(const std::string& name, const toml::node& node, const Validator& validator) {
  const auto path = std::string("data.") + kDataColumnsKey + "." + toml_key(name);
  DataColumn column;
  column.name = name;
  if (name.empty()) return validator.fail(path, "a column needs a name, got an empty key");
  if (const auto* table = node.as_table()) return read_column_table(std::move(column), *table, path, validator);
  if (!node.is_string())
    return validator.fail(path, "expected one of " + kind_choices() + " or a table { kind = \"ids\", max_id = N }, got " +
                                    describe_node(node));
  auto kind = read_kind(node, path, validator);
  if (!kind) return Error{kind.error()};
  column.kind = *kind;
  return column;
}

// data.label and data.path go with named columns, and only with them.
Status check_label_and_path(const DataSection& data, const Validator& validator) {
  if (data.columns.empty()) {
    if (data.label.empty()) return success();
    return validator.fail("data.label",
                          fmt::format("names the label column of named columns, but [data.columns] declares none "
                                      "(got {})",
                                      echoed(toml_string(data.label))));
  }
  if (data.label.empty())
    return validator.fail("data.label", "missing; named columns ([data.columns]) need the name of the label's column");
  const bool is_input = std::any_of(data.columns.begin(), data.columns.end(),
                                    [&](const DataColumn& column) { return column.name == data.label; });
  if (is_input)
    return validator.fail("data.label", fmt::format("{} is declared in [data.columns] as an input; the label must be "
                                                    "a column of its own",
                                                    echoed(toml_string(data.label))));
  if (data.path.empty())
    return validator.fail("data.path", "missing; named columns ([data.columns]) are read from a JSON Lines, CSV or "
                                       "TSV file");
  return success();
}

}  // namespace

Status read_data_columns(const toml::table* data_section, const Validator& validator, DataSection& out) {
  out.columns.clear();
  const toml::node* node = data_section ? data_section->get(kDataColumnsKey) : nullptr;
  const std::string path = std::string("data.") + kDataColumnsKey;
  if (node) {
    const auto* table = node->as_table();
    if (!table) return validator.fail(path, std::string("expected ") + data_columns_expected + ", got " +
                                                describe_node(*node));
    if (table->empty()) return validator.fail(path, std::string("expected ") + data_columns_expected +
                                                        ", got an empty table");
    if (table->size() > kMaxDataColumns)
      return validator.fail(path, fmt::format("expected at most {} columns, got {}", kMaxDataColumns, table->size()));
    for (const auto& [key_node, value] : *table) {
      auto column = read_column(std::string(key_node.str()), value, validator);
      if (!column) return Error{column.error()};
      out.columns.push_back(std::move(*column));
    }
    // toml++ keeps a table's keys sorted; sorting here says so rather than relying on it.
    std::sort(out.columns.begin(), out.columns.end(),
              [](const DataColumn& a, const DataColumn& b) { return a.name < b.name; });
  }
  return check_label_and_path(out, validator);
}

std::string render_data_columns(const std::vector<DataColumn>& columns, ConfigFormat format) {
  if (columns.empty()) return "";
  const bool thinc = format == ConfigFormat::thinc;
  const auto key = [thinc](const std::string& name) { return thinc ? name : toml_key(name); };
  std::string out = std::string("\n[data.") + kDataColumnsKey + "]\n";
  std::string own_sections;  // Thinc: after every plain key, as a section ends at the next header
  for (const auto& column : columns) {
    const auto kind = toml_string(name_in(column_kind_names, column.kind));
    if (!column.max_id)
      out += fmt::format("{} = {}\n", key(column.name), kind);
    else if (thinc)
      own_sections += fmt::format("\n[data.{}.{}]\n{} = {}\n{} = {}\n", kDataColumnsKey, column.name, kKindKey, kind,
                                  kMaxIdKey, *column.max_id);
    else
      out += fmt::format("{} = {{ {} = {}, {} = {} }}\n", key(column.name), kKindKey, kind, kMaxIdKey,
                         *column.max_id);
  }
  return out + own_sections;
}

std::vector<std::string> number_column_names(const std::vector<DataColumn>& columns) {
  std::vector<std::string> names;
  for (const auto& column : columns)
    if (column.kind == ColumnKind::number) names.push_back(column.name);
  return names;
}

}  // namespace psgrad
