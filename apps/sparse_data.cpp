// Reads named-column files into the train and dev sets of a sparse run.
#include "apps/sparse_data.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "apps/invoked_program.hpp"
#include "io/sparse_examples.hpp"
#include "model/table_graph.hpp"
#include "model/registry.hpp"

namespace psgrad {

namespace {

// The examples at `indices` (in that order), every field and numeric column with them.
SparseDataset take_examples(const SparseDataset& all, const std::vector<std::size_t>& indices, std::string origin) {
  SparseDataset part;
  part.count = indices.size();
  part.number_names = all.number_names;
  part.class_names = all.class_names;
  part.origin = std::move(origin);
  for (const auto& field : all.id_fields) {
    IdField taken{field.name, {0}, {}};
    taken.offsets.reserve(indices.size() + 1);
    for (const auto e : indices) {
      taken.ids.insert(taken.ids.end(), field.bag(e), field.bag(e) + field.length(e));
      taken.offsets.push_back(taken.ids.size());
    }
    part.id_fields.push_back(std::move(taken));
  }
  const auto width = all.number_width();
  part.numbers.reserve(indices.size() * width);
  part.labels.reserve(indices.size());
  for (const auto e : indices) {
    part.numbers.insert(part.numbers.end(), all.number_row(e), all.number_row(e) + width);
    part.labels.push_back(all.labels[e]);
  }
  return part;
}

// The last `fraction` of each class, in file order, is dev: the dense readers' split (split_by_fraction).
Result<std::pair<SparseDataset, SparseDataset>> split_by_class(const SparseDataset& all, double fraction) {
  std::vector<std::size_t> per_class(all.num_classes(), 0);
  for (const auto label : all.labels) ++per_class[label];
  std::vector<std::size_t> train_quota(per_class.size());
  for (std::size_t c = 0; c < per_class.size(); ++c)
    train_quota[c] = per_class[c] - static_cast<std::size_t>(std::llround(fraction * static_cast<double>(per_class[c])));
  std::vector<std::size_t> taken(per_class.size(), 0);
  std::vector<std::size_t> train_indices;
  std::vector<std::size_t> dev_indices;
  for (std::size_t e = 0; e < all.count; ++e) {
    const auto label = all.labels[e];
    (taken[label]++ < train_quota[label] ? train_indices : dev_indices).push_back(e);
  }
  if (train_indices.empty() || dev_indices.empty())
    return Error{fmt::format("{}: data.dev_fraction {} of {} examples leaves {} for training and {} for dev; both "
                             "need at least one",
                             all.origin, fraction, all.count, train_indices.size(), dev_indices.size())};
  const auto percent = 100.0 * fraction;
  return std::make_pair(
      take_examples(all, train_indices, fmt::format("{} (the first {:g}% of each class)", all.origin, 100.0 - percent)),
      take_examples(all, dev_indices, fmt::format("{} (the last {:g}% of each class)", all.origin, percent)));
}

std::string field_text(const SparseDataset& data) {
  std::string text;
  for (const auto& field : data.id_fields) text += (text.empty() ? "" : ", ") + field.name;
  return text;
}

}  // namespace

bool is_sparse_model(const Config& config) { return model_has_tables(config.model); }

Status check_model_fits_data(const Config& config) {
  const bool columns = !config.data.columns.empty();
  const bool sparse = is_sparse_model(config);
  if (columns && !sparse)
    return Error{fmt::format("{}: data.columns: named columns feed embedding tables, but model.@layers \"{}\" has "
                             "none; use a model with embedding tables ({})",
                             config.source, config.model.architecture, fmt::join(architecture_names_with_tables(), ", "))};
  if (sparse && !columns)
    return Error{fmt::format("{}: model.@layers: \"{}\" reads named columns, but the config declares none; declare "
                             "them in [data.columns] with data.path and data.label",
                             config.source, config.model.architecture)};
  if (!sparse) return success();
  // One table per id or text column, known from the config alone: `config check` refuses what train would.
  auto front = model_table_front(config.model);
  if (!front) return Error{fmt::format("{}: model: {}", config.source, front.error())};
  const auto id_columns = static_cast<std::size_t>(std::count_if(
      config.data.columns.begin(), config.data.columns.end(), [](const auto& column) { return column.kind != ColumnKind::number; }));
  if (front->fields.size() == id_columns) return success();
  if (config.model.graph.empty())
    return Error{fmt::format("{}: model.embedding_widths has {} entries, but [data.columns] declares {} id or text "
                             "columns; give one width and one row count per column",
                             config.source, front->fields.size(), id_columns)};
  return Error{fmt::format("{}: the model's table front reads {} id column{}, but [data.columns] declares {} id or text "
                           "columns; give it one table per column (a concatenate.v1 of one chain per column)",
                           config.source, front->fields.size(), front->fields.size() == 1 ? "" : "s", id_columns)};
}

std::uint32_t majority_class(const std::vector<std::uint32_t>& labels, std::size_t classes) {
  std::vector<std::size_t> counts(classes, 0);
  for (const auto label : labels) ++counts[label];
  return static_cast<std::uint32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
}

Result<SparseDataSplit> load_sparse_split(const Config& config) {
  if (auto fits = check_model_fits_data(config); !fits) return Error{fits.error()};
  const auto& data = config.data;
  if (!data.dev_path.empty() && data.dev_fraction > 0)
    return Error{fmt::format("data.dev_path {} and data.dev_fraction {}: set one of them, not both", data.dev_path,
                             data.dev_fraction)};
  if (data.dev_path.empty() && data.dev_fraction <= 0)
    return Error{fmt::format("{}: no dev set to evaluate on; set data.dev_path (a file of dev examples) or "
                             "data.dev_fraction (a share of these examples to hold out)",
                             data.path)};
  // As a missing MNIST folder names the set-up that makes it, a missing file names the commands that do.
  std::error_code ignored;
  if (!std::filesystem::exists(data.path, ignored))
    return Error{fmt::format("{}: not found (data.path); `{} data debian-packages --out {}` writes this machine's "
                             "package lists there, `{} data click-logs --out {}` generated click logs, or give "
                             "your own JSON Lines, CSV or TSV file",
                             data.path, invoked_program(), data.path, invoked_program(), data.path)};
  auto layout = sparse_layout(data);
  auto all = read_sparse_examples(data.path, layout);
  if (!all) return Error{all.error()};
  if (all->num_classes() < 2)
    return Error{fmt::format("{}: every example has the label \"{}\"; a classifier needs at least two classes",
                             data.path, all->class_names.front())};
  SparseDataset train;
  SparseDataset dev;
  std::string dev_text;
  if (!data.dev_path.empty()) {
    layout.known_classes = all->class_names;
    auto read = read_sparse_examples(data.dev_path, layout);
    if (!read) return Error{read.error()};
    train = std::move(all).value();
    dev = std::move(read).value();
    dev_text = fmt::format(", dev from {}", data.dev_path);
  } else {
    auto split = split_by_class(*all, data.dev_fraction);
    if (!split) return Error{split.error()};
    train = std::move(split->first);
    dev = std::move(split->second);
    dev_text = fmt::format(", dev the last {:g}% of each class", 100.0 * data.dev_fraction);
  }
  SparseDataSplit split;
  split.class_names = train.class_names;
  const auto majority = majority_class(train.labels, train.num_classes());
  const auto hits = std::count(dev.labels.begin(), dev.labels.end(), majority);
  split.majority_accuracy = static_cast<double>(hits) / static_cast<double>(dev.count);
  split.description = fmt::format("{}: {} train / {} dev, id fields {}, {} classes (always \"{}\" scores {:.3f} on "
                                  "dev){}",
                                  data.path, train.count, dev.count, field_text(train), train.num_classes(),
                                  split.class_names[majority], split.majority_accuracy, dev_text);
  split.train = std::make_shared<const SparseDataset>(std::move(train));
  split.dev = std::make_shared<const SparseDataset>(std::move(dev));
  return split;
}

}  // namespace psgrad
