// Row-by-row filling of a SparseDataset; string labels get first-seen numbers while reading and their
// sorted numbers at the end, so no label needs to be held twice.
#include "io/sparse_example_builder.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include <fmt/format.h>

#include "io/labeled_examples.hpp"
#include "io/user_text.hpp"
#include "model/string_hash.hpp"

namespace psgrad {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string shown(std::string_view text) { return "\"" + echoed(text, 40) + "\""; }

}  // namespace

SparseExampleBuilder::SparseExampleBuilder(std::string path, SparseLayout layout)
    : path_(std::move(path)), layout_(std::move(layout)) {
  data_.origin = path_;
  for (const auto& column : layout_.columns) {
    if (column.kind == ColumnKind::number) {
      slot_.push_back(data_.number_names.size());
      data_.number_names.push_back(column.name);
    } else {
      slot_.push_back(data_.id_fields.size());
      data_.id_fields.push_back(IdField{column.name, {0}, {}});
    }
  }
  given_.assign(layout_.columns.size() + 1, false);
  bag_size_.assign(layout_.columns.size(), 0);
  number_row_.assign(data_.number_names.size(), 0.0f);
  for (std::size_t c = 0; c < layout_.known_classes.size(); ++c)
    known_class_.emplace(layout_.known_classes[c], static_cast<std::uint32_t>(c));
}

Status SparseExampleBuilder::add_known_label(const std::string& name) {
  const auto found = known_class_.find(name);
  if (found == known_class_.end())
    return fail(kLabel, fmt::format("label {} was not among the {} classes of the training data", shown(name),
                                    layout_.known_classes.size()));
  data_.labels.push_back(found->second);
  return success();
}

std::optional<std::size_t> SparseExampleBuilder::target(std::string_view name) const {
  if (name == layout_.label) return layout_.without_labels ? std::nullopt : std::optional<std::size_t>(kLabel);
  // The columns are in name order (read_data_columns sorts them).
  const auto& columns = layout_.columns;
  const auto found = std::lower_bound(columns.begin(), columns.end(), name,
                                      [](const DataColumn& column, std::string_view n) { return column.name < n; });
  if (found == columns.end() || found->name != name) return std::nullopt;
  return static_cast<std::size_t>(found - columns.begin());
}

const std::string& SparseExampleBuilder::column_name(std::size_t column) const {
  return column == kLabel ? layout_.label : layout_.columns[column].name;
}

Error SparseExampleBuilder::fail(std::size_t column, const std::string& what) const {
  return Error{fmt::format("{}:{}: column {}: {}", path_, line_, shown(column_name(column)), what)};
}

Error SparseExampleBuilder::fail_line(const std::string& what) const {
  return Error{fmt::format("{}:{}: {}", path_, line_, what)};
}

void SparseExampleBuilder::start_example(std::uint64_t line) {
  line_ = line;
  std::fill(given_.begin(), given_.end(), false);
  std::fill(bag_size_.begin(), bag_size_.end(), 0);
}

Status SparseExampleBuilder::mark_given(std::size_t column) {
  const std::size_t index = column == kLabel ? given_.size() - 1 : column;
  if (given_[index]) return fail(column, "given twice on one line");
  given_[index] = true;
  return success();
}

Status SparseExampleBuilder::count_id(std::size_t column) {
  if (++bag_size_[column] > layout_.max_tokens)
    return fail(column, fmt::format("more than {} ids in one example (data.max_tokens)", layout_.max_tokens));
  return success();
}

Status SparseExampleBuilder::add_integer_id(std::size_t column, std::uint64_t id) {
  const auto& declared = layout_.columns[column];
  if (declared.max_id && id > *declared.max_id)
    return fail(column, fmt::format("id {} is out of range: data.columns.{} declares ids 0 to {}", id, declared.name,
                                    *declared.max_id));
  if (auto counted = count_id(column); !counted) return counted;
  data_.id_fields[slot_[column]].ids.push_back(id);
  return success();
}

Status SparseExampleBuilder::add_string_id(std::size_t column, std::string_view text) {
  const auto& declared = layout_.columns[column];
  if (declared.max_id)
    return fail(column, fmt::format("{} is a string, but data.columns.{} declares integer ids 0 to {}", shown(text),
                                    declared.name, *declared.max_id));
  if (auto counted = count_id(column); !counted) return counted;
  data_.id_fields[slot_[column]].ids.push_back(string_hash(text));
  return success();
}

Status SparseExampleBuilder::set_text(std::size_t column, std::string_view text) {
  if (auto given = mark_given(column); !given) return given;
  auto& ids = data_.id_fields[slot_[column]].ids;
  std::uint64_t tokens = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && is_blank(text[at])) ++at;
    if (at == text.size()) break;
    std::size_t end = at;
    while (end < text.size() && !is_blank(text[end])) ++end;
    if (++tokens > layout_.max_tokens)
      return fail(column, fmt::format("a text of more than {} tokens (data.max_tokens)", layout_.max_tokens));
    ids.push_back(string_hash(text.substr(at, end - at)));
    at = end;
  }
  return success();
}

Status SparseExampleBuilder::set_number(std::size_t column, double value) {
  if (auto given = mark_given(column); !given) return given;
  const auto stored = static_cast<float>(value);
  if (!std::isfinite(stored)) return fail(column, fmt::format("{} is not a finite float", value));
  number_row_[slot_[column]] = stored;
  return success();
}

Status SparseExampleBuilder::check_label_kind(bool is_string) {
  if (auto given = mark_given(kLabel); !given) return given;
  if (!labels_are_strings_) {
    labels_are_strings_ = is_string;
    first_label_line_ = line_;
  }
  if (*labels_are_strings_ == is_string) return success();
  return fail(kLabel, fmt::format("a {}, but line {} has a {} label; labels must be all strings or all whole numbers",
                                  is_string ? "string" : "whole number", first_label_line_,
                                  is_string ? "whole-number" : "string"));
}

Status SparseExampleBuilder::set_integer_label(std::uint64_t value) {
  if (auto kind = check_label_kind(false); !kind) return kind;
  if (value >= kMaxSparseClasses)
    return fail(kLabel, fmt::format("label {}: expected a class from 0 to {}", value, kMaxSparseClasses - 1));
  if (!known_class_.empty()) return add_known_label(std::to_string(value));
  largest_integer_label_ = std::max(largest_integer_label_, value);
  data_.labels.push_back(static_cast<std::uint32_t>(value));
  return success();
}

Status SparseExampleBuilder::set_string_label(std::string_view value) {
  if (auto kind = check_label_kind(true); !kind) return kind;
  const std::string name(value);
  if (!known_class_.empty()) return add_known_label(name);
  auto found = first_seen_.find(name);
  if (found == first_seen_.end()) {
    if (names_seen_.size() == kMaxSparseClasses)
      return fail(kLabel, fmt::format("label {}: more than {} different labels", shown(value), kMaxSparseClasses));
    found = first_seen_.emplace(name, static_cast<std::uint32_t>(names_seen_.size())).first;
    names_seen_.push_back(name);
  }
  data_.labels.push_back(found->second);
  return success();
}

Status SparseExampleBuilder::end_example() {
  for (std::size_t column = 0; column < layout_.columns.size(); ++column)
    if (!given_[column]) return fail(column, "missing");
  if (!given_.back() && !layout_.without_labels) return fail(kLabel, "missing (the label, data.label)");
  if (data_.count == kMaxExamples) return fail_line(fmt::format("more than {} examples", kMaxExamples));
  for (auto& field : data_.id_fields) field.offsets.push_back(field.ids.size());
  data_.numbers.insert(data_.numbers.end(), number_row_.begin(), number_row_.end());
  ++data_.count;
  return success();
}

Result<SparseDataset> SparseExampleBuilder::finish() {
  if (data_.count == 0) return Error{fmt::format("{}: holds no examples", path_)};
  if (!known_class_.empty()) {
    data_.class_names = layout_.known_classes;
  } else if (labels_are_strings_.value_or(false)) {
    std::vector<std::uint32_t> order(names_seen_.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return names_seen_[a] < names_seen_[b]; });
    std::vector<std::uint32_t> sorted_class(order.size());
    for (std::uint32_t rank = 0; rank < order.size(); ++rank) sorted_class[order[rank]] = rank;
    for (auto& label : data_.labels) label = sorted_class[label];
    for (auto index : order) data_.class_names.push_back(std::move(names_seen_[index]));
  } else {
    for (std::uint64_t c = 0; c <= largest_integer_label_; ++c) data_.class_names.push_back(std::to_string(c));
  }
  // Growth by doubling may have left up to half of each buffer unused: memory stays with what is kept.
  for (auto& field : data_.id_fields) {
    field.ids.shrink_to_fit();
    field.offsets.shrink_to_fit();
  }
  data_.numbers.shrink_to_fit();
  data_.labels.shrink_to_fit();
  return std::move(data_);
}

}  // namespace psgrad
