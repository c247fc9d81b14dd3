#include "model/sparse_batcher.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace psgrad {

std::optional<std::string> sparse_dataset_problem(const SparseDataset& data) {
  if (data.count == 0) return std::string("it has no examples");
  if (data.count > std::numeric_limits<std::uint32_t>::max())
    return fmt::format("{} examples, more than a 32-bit order can index", data.count);
  if (data.labels.size() != data.count)
    return fmt::format("{} labels for {} examples", data.labels.size(), data.count);
  for (std::size_t e = 0; e < data.count; ++e)
    if (data.labels[e] >= data.num_classes())
      return fmt::format("example {} has label {}, but there are {} classes", e, data.labels[e], data.num_classes());
  for (const auto& field : data.id_fields) {
    if (field.offsets.empty() || field.examples() != data.count || field.offsets.back() != field.ids.size())
      return fmt::format("id field '{}' does not hold one bag for each of the {} examples", field.name, data.count);
    for (std::size_t e = 0; e < data.count; ++e)
      if (field.offsets[e + 1] < field.offsets[e])
        return fmt::format("id field '{}': the bag of example {} ends before it starts", field.name, e);
  }
  if (data.numbers.size() != data.count * data.number_width())
    return fmt::format("{} numbers for {} examples of {} number columns", data.numbers.size(), data.count,
                       data.number_width());
  for (std::size_t i = 0; i < data.numbers.size(); ++i)
    if (!std::isfinite(data.numbers[i]))
      return fmt::format("number column '{}' of example {} is not finite", data.number_names[i % data.number_width()],
                         i / data.number_width());
  return std::nullopt;
}

SparseBatch gather_examples(const SparseDataset& data, const std::vector<std::uint32_t>& order, std::size_t begin,
                            std::size_t count) {
  SparseBatch batch;
  batch.size = count;
  batch.fields.resize(data.id_fields.size());
  batch.numbers.reserve(count * data.number_width());
  batch.targets = Matrix::Zero(static_cast<Eigen::Index>(count), static_cast<Eigen::Index>(data.num_classes()));
  for (std::size_t row = 0; row < count; ++row) {
    const std::size_t example = order.empty() ? begin + row : order[begin + row];
    for (std::size_t f = 0; f < data.id_fields.size(); ++f) {
      const auto& field = data.id_fields[f];
      batch.fields[f].add_example(field.bag(example), field.length(example));
    }
    batch.numbers.insert(batch.numbers.end(), data.number_row(example), data.number_row(example) + data.number_width());
    batch.targets(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(data.labels[example])) = 1.0f;
  }
  return batch;
}

SparseBatcher::SparseBatcher(std::shared_ptr<const SparseDataset> data, std::size_t batch_size, std::uint64_t seed)
    : data_(std::move(data)), batch_size_(batch_size), order_(data_ ? data_->count : 0, seed) {
  if (!data_) throw std::invalid_argument("SparseBatcher: no data set");
  if (auto problem = sparse_dataset_problem(*data_)) throw std::invalid_argument("SparseBatcher: " + *problem);
  if (batch_size_ == 0) throw std::invalid_argument("SparseBatcher: batch_size must be positive");
}

SparseBatch SparseBatcher::next() {
  const std::size_t size = order_.next_size(batch_size_);
  SparseBatch batch = gather_examples(*data_, order_.order(), order_.cursor(), size);
  order_.advance(size);
  return batch;
}

SparseBatcher::Position SparseBatcher::position() const { return order_.position(); }

void SparseBatcher::restore(const Position& position) {
  if (!order_.restore(position))
    throw std::invalid_argument("SparseBatcher::restore: cursor is past the end of the data set");
}

}  // namespace psgrad
