#include "model/maxout.hpp"

#include <cmath>
#include <stdexcept>

namespace psgrad {

Maxout::Maxout(std::size_t output_width, std::size_t input_width, std::size_t pieces, ArrayInitializers chosen)
    : output_width_(output_width), input_width_(input_width), pieces_(pieces), chosen_(std::move(chosen)) {
  if (pieces == 0) throw std::invalid_argument("Maxout needs at least one piece");
}

void Maxout::declare_parameters(const std::string& layer_name, ParameterLayout& layout) {
  w_.declare(layout, layer_name, "W", output_width_ * pieces_, input_width_);
  b_.declare(layout, layer_name, "b", output_width_, pieces_);
}

void Maxout::bind(float* weights, float* gradients, const ParameterLayout& layout) {
  w_.bind(weights, gradients, layout);
  b_.bind(weights, gradients, layout);
}

void Maxout::initialize(Random& rng) {
  // Thinc's glorot_uniform_init takes shape[0] + shape[1] of (nO, nP, nI).
  const double scale = std::sqrt(6.0 / static_cast<double>(output_width_ + pieces_));
  for (std::size_t i = 0; i < output_width_ * pieces_ * input_width_; ++i)
    w_.values[i] = static_cast<float>((2.0 * rng.uniform() - 1.0) * scale);
  std::fill(b_.values, b_.values + output_width_ * pieces_, 0.0f);
  if (chosen_.weights) chosen_.weights->fill(w_.values, {output_width_, pieces_, input_width_}, rng);
  if (chosen_.bias) chosen_.bias->fill(b_.values, {output_width_, pieces_}, rng);
}

void Maxout::reserve(std::size_t max_batch) {
  const auto rows = static_cast<Eigen::Index>(max_batch);
  pieces_out_.resize(rows, static_cast<Eigen::Index>(output_width_ * pieces_));
  d_pieces_.resize(pieces_out_.rows(), pieces_out_.cols());
  output_.resize(rows, static_cast<Eigen::Index>(output_width_));
  d_input_.resize(rows, static_cast<Eigen::Index>(input_width_));
  which_.resize(max_batch * output_width_);
}

ConstMatrixMap Maxout::forward(const ConstMatrixMap& input, bool /*is_train*/, Random& /*rng*/) {
  const auto n = input.rows();
  if (n > output_.rows() || input.cols() != static_cast<Eigen::Index>(input_width_))
    throw std::logic_error("maxout forward: batch larger than reserved or wrong input width");
  const auto width = static_cast<Eigen::Index>(output_width_ * pieces_);
  MatrixMap z(pieces_out_.data(), n, width);
  z.noalias() = input * ConstMatrixMap(w_.values, width, input_width_).transpose();
  z.rowwise() += ConstRowVectorMap(b_.values, width);
  MatrixMap y(output_.data(), n, output_width_);
  for (Eigen::Index row = 0; row < n; ++row) {
    const float* pieces = z.data() + row * width;
    for (std::size_t o = 0; o < output_width_; ++o) {
      std::size_t best = 0;  // the first of equal maxima, as NumPy's argmax
      for (std::size_t p = 1; p < pieces_; ++p)
        if (pieces[o * pieces_ + p] > pieces[o * pieces_ + best]) best = p;
      y(row, static_cast<Eigen::Index>(o)) = pieces[o * pieces_ + best];
      which_[static_cast<std::size_t>(row) * output_width_ + o] = static_cast<std::uint32_t>(best);
    }
  }
  input_ = input.data();
  rows_ = static_cast<std::size_t>(n);
  return ConstMatrixMap(output_.data(), n, output_width_);
}

ConstMatrixMap Maxout::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  const auto n = static_cast<Eigen::Index>(rows_);
  const auto width = static_cast<Eigen::Index>(output_width_ * pieces_);
  MatrixMap d_z(d_pieces_.data(), n, width);
  d_z.setZero();
  for (Eigen::Index row = 0; row < n; ++row)
    for (std::size_t o = 0; o < output_width_; ++o)
      d_z(row, static_cast<Eigen::Index>(o * pieces_ + which_[static_cast<std::size_t>(row) * output_width_ + o])) =
          d_output(row, static_cast<Eigen::Index>(o));
  const ConstMatrixMap x(input_, n, input_width_);
  MatrixMap(w_.gradients, width, input_width_).noalias() = d_z.transpose() * x;
  RowVectorMap(b_.gradients, width) = d_z.colwise().sum();
  if (!need_input_gradient) return ConstMatrixMap(d_input_.data(), 0, input_width_);
  MatrixMap d_x(d_input_.data(), n, input_width_);
  d_x.noalias() = d_z * ConstMatrixMap(w_.values, width, input_width_);
  return ConstMatrixMap(d_input_.data(), n, input_width_);
}

}  // namespace psgrad
