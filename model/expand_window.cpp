#include "model/expand_window.hpp"

#include <stdexcept>

namespace psgrad {

ExpandWindow::ExpandWindow(std::size_t width, std::size_t window_size, bool ragged)
    : width_(width), window_(window_size), ragged_(ragged) {
  if (window_size == 0) throw std::invalid_argument("expand_window needs a window of at least 1");
}

void ExpandWindow::reserve(std::size_t max_batch) {
  output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(output_width()));
  d_input_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(width_));
}

template <class Visit>
void ExpandWindow::each_window(std::size_t rows, Visit visit) const {
  const std::size_t sequences = ragged_ ? offsets_->size() - 1 : 1;
  for (std::size_t s = 0; s < sequences; ++s) {
    const std::size_t begin = ragged_ ? (*offsets_)[s] : 0;
    const std::size_t end = ragged_ ? (*offsets_)[s + 1] : rows;
    for (std::size_t row = begin; row < end; ++row)
      for (std::size_t block = 0; block <= 2 * window_; ++block) {
        // Block b holds row + b - window.
        if (row + block < begin + window_ || row + block >= end + window_) continue;
        visit(row, block, row + block - window_);
      }
  }
}

ConstMatrixMap ExpandWindow::forward(const ConstMatrixMap& input, bool /*is_train*/, Random& /*rng*/) {
  const auto n = static_cast<std::size_t>(input.rows());
  if (input.rows() > output_.rows() || input.cols() != static_cast<Eigen::Index>(width_))
    throw std::logic_error("expand_window forward: batch larger than reserved or wrong input width");
  if (ragged_ && (offsets_ == nullptr || offsets_->empty() || offsets_->back() != n))
    throw std::logic_error("expand_window forward: its sequences do not cover the input");
  const auto out_width = output_width();
  std::fill(output_.data(), output_.data() + n * out_width, 0.0f);
  each_window(n, [&](std::size_t row, std::size_t block, std::size_t source) {
    std::copy(input.data() + source * width_, input.data() + (source + 1) * width_,
              output_.data() + row * out_width + block * width_);
  });
  rows_ = n;
  return ConstMatrixMap(output_.data(), input.rows(), static_cast<Eigen::Index>(out_width));
}

ConstMatrixMap ExpandWindow::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  if (!need_input_gradient) return ConstMatrixMap(d_input_.data(), 0, static_cast<Eigen::Index>(width_));
  const auto out_width = output_width();
  std::fill(d_input_.data(), d_input_.data() + rows_ * width_, 0.0f);
  each_window(rows_, [&](std::size_t row, std::size_t block, std::size_t source) {
    const float* from = d_output.data() + row * out_width + block * width_;
    float* to = d_input_.data() + source * width_;
    for (std::size_t i = 0; i < width_; ++i) to[i] += from[i];
  });
  return ConstMatrixMap(d_input_.data(), static_cast<Eigen::Index>(rows_), static_cast<Eigen::Index>(width_));
}

}  // namespace psgrad
