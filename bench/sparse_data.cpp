#include "bench/sparse_data.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "io/click_log_file.hpp"
#include "io/click_log_generator.hpp"
#include "model/hashembed.hpp"

namespace psgrad::bench {

namespace {

// One hidden model for every data set of the section: train and dev sets differ by row seed only.
constexpr std::uint64_t kClickTruthSeed = 0;

void append_example(const SparseDataset& from, std::size_t example, SparseDataset& to) {
  for (std::size_t f = 0; f < from.id_fields.size(); ++f) {
    const auto& source = from.id_fields[f];
    auto& target = to.id_fields[f];
    target.ids.insert(target.ids.end(), source.bag(example), source.bag(example) + source.length(example));
    target.offsets.push_back(target.ids.size());
  }
  const float* numbers = from.number_row(example);
  to.numbers.insert(to.numbers.end(), numbers, numbers + from.number_width());
  to.labels.push_back(from.labels[example]);
  ++to.count;
}

SparseDataset empty_like(const SparseDataset& data, std::string origin) {
  SparseDataset empty;
  empty.id_fields.resize(data.id_fields.size());
  for (std::size_t f = 0; f < data.id_fields.size(); ++f) empty.id_fields[f].name = data.id_fields[f].name;
  empty.number_names = data.number_names;
  empty.class_names = data.class_names;
  empty.origin = std::move(origin);
  return empty;
}

template <class Value>
void write_array(const std::string& path, const std::vector<Value>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(Value)));
  if (!out) throw std::runtime_error(path + ": could not be written");
}

}  // namespace

std::shared_ptr<const SparseDataset> click_dataset(std::size_t rows, std::uint64_t row_seed) {
  auto data = std::make_shared<SparseDataset>();
  data->count = rows;
  data->id_fields.resize(kClickCategoricalFields);
  for (std::size_t f = 0; f < kClickCategoricalFields; ++f) {
    data->id_fields[f].name = fmt::format("C{}", f + 1);
    data->id_fields[f].ids.reserve(rows);
    data->id_fields[f].offsets.reserve(rows + 1);
  }
  data->class_names = {"0", "1"};
  data->origin = fmt::format("click logs, {} rows, seed {}", rows, row_seed);
  ClickLogGenerator generator(kClickTruthSeed, row_seed);
  ClickRow row;
  for (std::size_t r = 0; r < rows; ++r) {
    generator.next(row);
    for (std::size_t f = 0; f < kClickCategoricalFields; ++f) {
      data->id_fields[f].ids.push_back(row.ids[f]);
      data->id_fields[f].offsets.push_back(data->id_fields[f].ids.size());
    }
    data->labels.push_back(row.clicked ? 1 : 0);
  }
  return data;
}

void write_click_file(const std::string& path, std::size_t rows, std::uint64_t row_seed) {
  if (auto written = write_click_logs(path, rows, row_seed, kClickTruthSeed); !written)
    throw std::runtime_error(written.error());
}

std::pair<std::shared_ptr<const SparseDataset>, std::shared_ptr<const SparseDataset>> split_last_of_each_class(
    const SparseDataset& all, double fraction) {
  std::vector<std::size_t> per_class(all.num_classes(), 0);
  for (const auto label : all.labels) ++per_class[label];
  // llround, as the dense split rounds each class's dev share.
  std::vector<std::size_t> train_quota(per_class.size());
  for (std::size_t c = 0; c < per_class.size(); ++c)
    train_quota[c] = per_class[c] - static_cast<std::size_t>(std::llround(fraction * static_cast<double>(per_class[c])));
  auto train = std::make_shared<SparseDataset>(
      empty_like(all, fmt::format("{} (the first {:g}% of each class)", all.origin, 100.0 * (1.0 - fraction))));
  auto dev = std::make_shared<SparseDataset>(
      empty_like(all, fmt::format("{} (the last {:g}% of each class)", all.origin, 100.0 * fraction)));
  std::vector<std::size_t> taken(per_class.size(), 0);
  for (std::size_t e = 0; e < all.count; ++e) {
    const auto label = all.labels[e];
    append_example(all, e, taken[label]++ < train_quota[label] ? *train : *dev);
  }
  return {train, dev};
}

double majority_accuracy(const SparseDataset& train, const SparseDataset& dev) {
  std::vector<std::size_t> per_class(train.num_classes(), 0);
  for (const auto label : train.labels) ++per_class[label];
  const auto majority = static_cast<std::uint32_t>(std::max_element(per_class.begin(), per_class.end()) -
                                                   per_class.begin());
  const auto hits = std::count(dev.labels.begin(), dev.labels.end(), majority);
  return dev.count == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(dev.count);
}

nlohmann::json write_peer_keys(const std::string& folder, const std::string& name, const SparseModel& model,
                               const SparseDataset& data) {
  nlohmann::json fields = nlohmann::json::array();
  for (std::size_t f = 0; f < model.fields().size(); ++f) {
    const auto& spec = model.fields()[f];
    const auto& field = data.id_fields.at(spec.column);
    std::vector<std::int64_t> keys, offsets{0};
    keys.reserve(4 * field.ids.size());
    for (std::size_t e = 0; e < field.examples(); ++e) {
      for (std::size_t i = 0; i < field.length(e); ++i)
        for (const auto key : hashembed_keys(field.bag(e)[i], spec.seed, spec.rows))
          keys.push_back(static_cast<std::int64_t>(key));
      offsets.push_back(static_cast<std::int64_t>(keys.size()));
    }
    const auto stem = fmt::format("{}/{}.{}", folder, name, f);
    write_array(stem + ".keys", keys);
    write_array(stem + ".offsets", offsets);
    fields.push_back({{"name", field.name}, {"keys", stem + ".keys"}, {"offsets", stem + ".offsets"}});
  }
  std::vector<std::int64_t> labels(data.labels.begin(), data.labels.end());
  const auto labels_path = fmt::format("{}/{}.labels", folder, name);
  write_array(labels_path, labels);
  return {{"examples", data.count}, {"fields", fields}, {"labels", labels_path}};
}


std::shared_ptr<const SparseDataset> first_examples(std::shared_ptr<const SparseDataset> all, std::size_t count) {
  if (count == 0 || count >= all->count) return all;
  auto part = std::make_shared<SparseDataset>(empty_like(*all, fmt::format("{} (the first {})", all->origin, count)));
  for (std::size_t e = 0; e < count; ++e) append_example(*all, e, *part);
  return part;
}

nlohmann::json peer_model(const TrainingJob& job, const SparseModel& model) {
  nlohmann::json fields = nlohmann::json::array();
  for (const auto& field : model.fields()) fields.push_back({{"rows", field.rows}, {"width", field.width}});
  return {{"fields", fields},
          {"pooling", model.pooling() == Pooling::sum ? "sum" : "mean"},
          {"hidden_width", get_integer(job.model.settings, "hidden_width")},
          {"dropout", get_number(job.model.settings, "dropout")},
          {"classes", model.output_width()},
          {"batch_size", job.training.batch_size},
          {"learn_rate", get_number(job.optimizer.settings, "learn_rate")}};
}

ScratchFolder::ScratchFolder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "psgrad-bench-sparse-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error(pattern + ": could not make a temporary folder");
  path_ = pattern;
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace psgrad::bench
