// CSV files of examples: one row per example, a label column and feature columns, header optional.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "io/labeled_examples.hpp"
#include "model/result.hpp"

namespace psgrad {

// The largest CSV file read: the IDX bound (a value takes at least two characters, so this still
// holds more examples than any IDX file).
constexpr std::uint64_t kMaxCsvBytes = std::uint64_t{6} << 30;

struct CsvLayout {
  std::optional<std::int64_t> label_column;  // from 0, negative from the end; none: every column is a feature
  double scale = 1.0;                        // features are multiplied by it
};

// Reads every row. The first row is a header when any of its fields is not a number, or when it counts
// its 10 or more columns (0, 1, 2, ... or 1, 2, 3, ..., as pandas writes integer column names). Every row must have the first row's
// number of columns. Errors are one line: "<path>:<line>: column <c>: ..." (line and column from 1).
Result<LabeledExamples> read_csv_examples(const std::string& path, const CsvLayout& layout);

// The number of columns of the first row, and whether that row is a header.
struct CsvShape {
  std::size_t columns = 0;
  bool has_header = false;
  std::uint64_t data_lines = 0;  // non-empty lines after the header: the examples, unless quoted fields span lines
};
Result<CsvShape> peek_csv_shape(const std::string& path);

}  // namespace psgrad
