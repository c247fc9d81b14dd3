// Minibatches: one Fisher–Yates permutation per epoch, rows gathered into buffers sized once.
#include "model/minibatcher.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace psgrad {

Minibatcher::Minibatcher(std::shared_ptr<const Dataset> data, std::size_t batch_size, std::uint64_t seed)
    : data_(std::move(data)), batch_size_(batch_size), order_(data_ ? data_->count : 0, seed) {
  if (!data_ || data_->count == 0) throw std::invalid_argument("Minibatcher: the data set is empty");
  if (batch_size_ == 0) throw std::invalid_argument("Minibatcher: batch_size must be positive");
  if (data_->count > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("Minibatcher: more examples than a 32-bit order can index");
  }
  if (data_->input_size() != data_->count * data_->width ||
      data_->targets.size() != data_->count * data_->num_classes) {
    throw std::invalid_argument("Minibatcher: data set buffers do not match count x width / num_classes");
  }
  // No batch is ever larger than the data set, so a huge batch_size does not over-allocate.
  const std::size_t max_rows = std::min(batch_size_, data_->count);
  inputs_.resize(max_rows * data_->width);
  targets_.resize(max_rows * data_->num_classes);
}

Minibatcher::Batch Minibatcher::next() {
  const std::size_t width = data_->width, classes = data_->num_classes;
  const std::size_t size = order_.next_size(batch_size_);
  const std::size_t cursor = order_.cursor();
  for (std::size_t row = 0; row < size; ++row) {
    const std::size_t example = order_.order()[cursor + row];
    std::copy_n(data_->input_data() + example * width, width, inputs_.data() + row * width);
    std::copy_n(data_->targets.data() + example * classes, classes, targets_.data() + row * classes);
  }
  order_.advance(size);
  const auto rows = static_cast<Eigen::Index>(size);
  return Batch{ConstMatrixMap(inputs_.data(), rows, static_cast<Eigen::Index>(width)),
               ConstMatrixMap(targets_.data(), rows, static_cast<Eigen::Index>(classes)), size};
}

Minibatcher::Position Minibatcher::position() const { return order_.position(); }

void Minibatcher::restore(const Position& position) {
  if (!order_.restore(position))
    throw std::invalid_argument("Minibatcher::restore: cursor is past the end of the data set");
}

}  // namespace psgrad
