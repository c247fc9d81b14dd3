// Collects examples of named columns row by row into a SparseDataset, for the JSON Lines and CSV/TSV
// readers alike: ids checked and hashed, texts split and bounded, labels numbered, each problem one
// line naming the file, the line and the column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/data_columns.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

// What a reader is asked for: the declared columns, the label's column, the token bound.
struct SparseLayout {
  std::vector<DataColumn> columns;
  std::string label;
  std::uint64_t max_tokens = 1024;
  // Non-empty: the classes a trained model knows, numbered in this order; a label not among them is
  // refused at its line (a dev or eval file read against its training data's classes).
  std::vector<std::string> known_classes;
  // Examples to predict: the label's column is not read, and may be missing.
  bool without_labels = false;
};

// String labels become classes; a data set has at most this many.
constexpr std::size_t kMaxSparseClasses = std::size_t{1} << 16;

class SparseExampleBuilder {
 public:
  SparseExampleBuilder(std::string path, SparseLayout layout);

  // Which input a file's column or key is: a declared column's index, the label, or nothing (ignored).
  static constexpr std::size_t kLabel = static_cast<std::size_t>(-1);
  std::optional<std::size_t> target(std::string_view name) const;
  const SparseLayout& layout() const { return layout_; }
  const std::string& column_name(std::size_t column) const;

  // Each example: start, give every declared column and the label once, end. An ids column is given
  // by mark_given, then each of its ids added (none: an empty bag); the others by their set_ call.
  void start_example(std::uint64_t line);
  // An id of an ids column: an integer (checked against max_id), or a string, hashed.
  Status add_integer_id(std::size_t column, std::uint64_t id);
  Status add_string_id(std::size_t column, std::string_view text);
  // The whole value of a text column: split on whitespace, each token hashed.
  Status set_text(std::size_t column, std::string_view text);
  Status set_number(std::size_t column, double value);
  Status set_integer_label(std::uint64_t value);
  Status set_string_label(std::string_view value);
  // Marks a column as given, so that end_example does not call it missing; refuses a column given
  // twice on one line.
  Status mark_given(std::size_t column);
  // Refuses an example that left out a declared column or the label.
  Status end_example();

  // The examples, with classes numbered; refuses a file with none.
  Result<SparseDataset> finish();

  // "<path>:<line>: column "<name>": <what>" and "<path>:<line>: <what>".
  Error fail(std::size_t column, const std::string& what) const;
  Error fail_line(const std::string& what) const;

 private:
  Status count_id(std::size_t column);
  Status check_label_kind(bool is_string);
  Status add_known_label(const std::string& name);

  std::string path_;
  SparseLayout layout_;
  std::uint64_t line_ = 0;
  SparseDataset data_;
  std::vector<std::size_t> slot_;     // column -> its IdField or its place in a row of numbers
  std::vector<bool> given_;           // this example's columns given so far; the label is the last
  std::vector<std::uint64_t> bag_size_;  // this example's ids so far, per column
  std::vector<float> number_row_;
  std::optional<bool> labels_are_strings_;
  std::uint64_t first_label_line_ = 0;
  std::unordered_map<std::string, std::uint32_t> first_seen_;  // string label -> its first-seen number
  std::vector<std::string> names_seen_;
  std::uint64_t largest_integer_label_ = 0;
  std::unordered_map<std::string, std::uint32_t> known_class_;  // layout_.known_classes -> its number
};

}  // namespace psgrad
