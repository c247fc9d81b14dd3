#include "model/combinators.hpp"

#include <map>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

namespace psgrad {

Combinator::Combinator(LayerList children) : children_(std::move(children)) {
  if (children_.empty()) throw std::invalid_argument("a combinator needs at least one layer");
}

void Combinator::declare_parameters(const std::string& layer_name, ParameterLayout& layout) {
  std::map<std::string, int> ordinals;
  for (auto& child : children_) {
    const auto kind = child->kind();
    child->declare_parameters(fmt::format("{}.{}{}", layer_name, kind, ++ordinals[kind]), layout);
  }
}

void Combinator::bind(float* weights, float* gradients, const ParameterLayout& layout) {
  for (auto& child : children_) child->bind(weights, gradients, layout);
}

void Combinator::initialize(Random& rng) {
  for (auto& child : children_) child->initialize(rng);
}

void Combinator::reserve(std::size_t max_batch) {
  for (auto& child : children_) child->reserve(max_batch);
}

Chain::Chain(LayerList children) : Combinator(std::move(children)) {
  for (std::size_t i = 1; i < children_.size(); ++i)
    if (children_[i]->input_width() != children_[i - 1]->output_width())
      throw std::invalid_argument(fmt::format("chain: layer {} takes {} features, layer {} gives {}", i + 1,
                                              children_[i]->input_width(), i, children_[i - 1]->output_width()));
}

ConstMatrixMap Chain::forward(const ConstMatrixMap& input, bool is_train, Random& rng) {
  ConstMatrixMap activations = input;
  for (auto& child : children_) new (&activations) ConstMatrixMap(child->forward(activations, is_train, rng));
  return activations;
}

ConstMatrixMap Chain::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  ConstMatrixMap gradient = d_output;
  for (std::size_t i = children_.size(); i-- > 0;)
    new (&gradient) ConstMatrixMap(children_[i]->backward(gradient, i > 0 || need_input_gradient));
  return gradient;
}

namespace {

LayerList one_layer(std::unique_ptr<Layer> child) {
  LayerList list;
  list.push_back(std::move(child));
  return list;
}

void check_same_widths(const LayerList& children, const char* combinator) {
  for (const auto& child : children)
    if (child->input_width() != children.front()->input_width() ||
        (std::string(combinator) == "add" && child->output_width() != children.front()->output_width()))
      throw std::invalid_argument(fmt::format("{}: its layers take or give different widths", combinator));
}

}  // namespace

void SummingCombinator::reserve(std::size_t max_batch) {
  Combinator::reserve(max_batch);
  output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(output_width()));
  d_input_.resize(output_.rows(), static_cast<Eigen::Index>(input_width()));
}

Residual::Residual(std::unique_ptr<Layer> child) : SummingCombinator(one_layer(std::move(child))) {
  if (children_.front()->input_width() != children_.front()->output_width())
    throw std::invalid_argument("residual: its layer must give as many features as it takes");
}

ConstMatrixMap Residual::forward(const ConstMatrixMap& input, bool is_train, Random& rng) {
  const auto n = input.rows();
  const ConstMatrixMap inner = children_.front()->forward(input, is_train, rng);
  MatrixMap y(output_.data(), n, output_.cols());
  y = input + inner;
  return ConstMatrixMap(output_.data(), n, output_.cols());
}

ConstMatrixMap Residual::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  const ConstMatrixMap inner = children_.front()->backward(d_output, need_input_gradient);
  if (!need_input_gradient) return inner;
  MatrixMap d_x(d_input_.data(), d_output.rows(), d_output.cols());
  d_x = d_output + inner;
  return ConstMatrixMap(d_input_.data(), d_output.rows(), d_output.cols());
}

Add::Add(LayerList children) : SummingCombinator(std::move(children)) { check_same_widths(children_, "add"); }

ConstMatrixMap Add::forward(const ConstMatrixMap& input, bool is_train, Random& rng) {
  const auto n = input.rows();
  MatrixMap y(output_.data(), n, output_.cols());
  y = children_.front()->forward(input, is_train, rng);
  for (std::size_t i = 1; i < children_.size(); ++i) y += children_[i]->forward(input, is_train, rng);
  return ConstMatrixMap(output_.data(), n, output_.cols());
}

ConstMatrixMap Add::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  MatrixMap d_x(d_input_.data(), need_input_gradient ? d_output.rows() : 0, d_input_.cols());
  for (std::size_t i = 0; i < children_.size(); ++i) {
    const ConstMatrixMap part = children_[i]->backward(d_output, need_input_gradient);
    if (!need_input_gradient) continue;
    if (i == 0) d_x = part;
    else d_x += part;
  }
  return ConstMatrixMap(d_input_.data(), d_x.rows(), d_x.cols());
}

Concatenate::Concatenate(LayerList children) : Combinator(std::move(children)) {
  check_same_widths(children_, "concatenate");
  for (const auto& child : children_) output_width_ += child->output_width();
}

void Concatenate::reserve(std::size_t max_batch) {
  Combinator::reserve(max_batch);
  const auto rows = static_cast<Eigen::Index>(max_batch);
  output_.resize(rows, static_cast<Eigen::Index>(output_width_));
  d_input_.resize(rows, static_cast<Eigen::Index>(input_width()));
  d_part_.resize(rows, static_cast<Eigen::Index>(output_width_));
}

ConstMatrixMap Concatenate::forward(const ConstMatrixMap& input, bool is_train, Random& rng) {
  const auto n = input.rows();
  MatrixMap y(output_.data(), n, static_cast<Eigen::Index>(output_width_));
  Eigen::Index start = 0;
  for (auto& child : children_) {
    const ConstMatrixMap part = child->forward(input, is_train, rng);
    y.middleCols(start, part.cols()) = part;
    start += part.cols();
  }
  rows_ = static_cast<std::size_t>(n);
  return ConstMatrixMap(output_.data(), n, static_cast<Eigen::Index>(output_width_));
}

ConstMatrixMap Concatenate::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  const auto n = static_cast<Eigen::Index>(rows_);
  MatrixMap d_x(d_input_.data(), need_input_gradient ? n : 0, d_input_.cols());
  // Each child gets its columns of d(output) as a contiguous block, as Thinc's as_contig gives them.
  float* part_data = d_part_.data();
  Eigen::Index start = 0;
  for (std::size_t i = 0; i < children_.size(); ++i) {
    const auto width = static_cast<Eigen::Index>(children_[i]->output_width());
    MatrixMap d_part(part_data, n, width);
    d_part = d_output.middleCols(start, width);
    part_data += n * width;
    start += width;
    const ConstMatrixMap part = children_[i]->backward(ConstMatrixMap(d_part.data(), n, width), need_input_gradient);
    if (!need_input_gradient) continue;
    if (i == 0) d_x = part;
    else d_x += part;
  }
  return ConstMatrixMap(d_input_.data(), d_x.rows(), d_x.cols());
}

}  // namespace psgrad
