// Named input columns of a data file, as [data.columns] declares them: each column's name and kind
// (ids, text or number), read from the config, checked, and written back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "io/config_format.hpp"
#include "model/enum_names.hpp"
#include "model/result.hpp"

namespace psgrad {

class Validator;
struct DataSection;

// How a column's value becomes input: ids as they are (integers) or string-hashed (strings); text split
// on whitespace, each token string-hashed; a number as one float.
enum class ColumnKind { ids, text, number };
inline constexpr EnumName<ColumnKind> column_kind_names[] = {
    {ColumnKind::ids, "ids"}, {ColumnKind::text, "text"}, {ColumnKind::number, "number"}};

struct DataColumn {
  std::string name;
  ColumnKind kind = ColumnKind::ids;
  // ids: the largest integer id allowed, so an id out of range is refused at its line; none: any.
  std::optional<std::uint64_t> max_id;

  bool operator==(const DataColumn& other) const {
    return name == other.name && kind == other.kind && max_id == other.max_id;
  }
};

// More columns than any data set declares by hand; bounds a config's memory and messages.
constexpr std::size_t kMaxDataColumns = 1024;

// The sub-table's key within [data], and what the config reference says of it.
inline constexpr const char* kDataColumnsKey = "columns";
extern const char* const data_columns_expected;
extern const char* const data_columns_description;

// Reads the [data.columns] sub-table of the data section (null: no [data]) into out.columns, in name
// order, and checks data.label against them: named columns need a label column that is not one of them,
// and data.label means nothing without them. Errors as the rest of the config's:
// "<source>: data.columns.<name>: expected ..., got ...".
Status read_data_columns(const toml::table* data_section, const Validator& validator, DataSection& out);

// The names of the number columns, in column order: the numbers a model with embedding tables reads
// after its embeddings, as the readers lay them out.
std::vector<std::string> number_column_names(const std::vector<DataColumn>& columns);

// The [data.columns] table, to follow [data]'s keys; empty when there are no columns. Thinc's format has
// no inline tables, so there a column with max_id gets a [data.columns.<name>] section of its own.
std::string render_data_columns(const std::vector<DataColumn>& columns, ConfigFormat format);

}  // namespace psgrad
