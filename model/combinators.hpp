// Thinc's combinators as layers over child layers: chain (f then g), residual (x + f(x)), add
// (f(x) + g(x) + ...), concatenate ([f(x), g(x), ...] side by side) and noop (x). Each child owns its
// parameters; a combinator declares them under its own name ("residual1.maxout1").
#pragma once

#include <memory>
#include <vector>

#include "model/layer.hpp"

namespace psgrad {

using LayerList = std::vector<std::unique_ptr<Layer>>;

// Shared by the combinators: the children, and their parameter declarations, binding, initialization
// and buffers, in child order.
class Combinator : public Layer {
 public:
  explicit Combinator(LayerList children);
  void declare_parameters(const std::string& layer_name, ParameterLayout& layout) override;
  void bind(float* weights, float* gradients, const ParameterLayout& layout) override;
  void initialize(Random& rng) override;
  void reserve(std::size_t max_batch) override;
  const LayerList& children() const { return children_; }

 protected:
  LayerList children_;
};

class Chain final : public Combinator {
 public:
  explicit Chain(LayerList children);
  std::string kind() const override { return "chain"; }
  std::size_t input_width() const override { return children_.front()->input_width(); }
  std::size_t output_width() const override { return children_.back()->output_width(); }
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;
};

// A combinator whose output is a sum of outputs as wide as its input (residual, add): the first
// layer's widths, and buffers for the sum and its input gradient.
class SummingCombinator : public Combinator {
 public:
  std::size_t input_width() const override { return children_.front()->input_width(); }
  std::size_t output_width() const override { return children_.front()->output_width(); }
  void reserve(std::size_t max_batch) override;

 protected:
  explicit SummingCombinator(LayerList children) : Combinator(std::move(children)) {}
  Matrix output_, d_input_;
};

class Residual final : public SummingCombinator {
 public:
  explicit Residual(std::unique_ptr<Layer> child);
  std::string kind() const override { return "residual"; }
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;
};

class Add final : public SummingCombinator {
 public:
  explicit Add(LayerList children);
  std::string kind() const override { return "add"; }
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;
};

class Concatenate final : public Combinator {
 public:
  explicit Concatenate(LayerList children);
  std::string kind() const override { return "concatenate"; }
  std::size_t input_width() const override { return children_.front()->input_width(); }
  std::size_t output_width() const override { return output_width_; }
  void reserve(std::size_t max_batch) override;
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;

 private:
  std::size_t output_width_ = 0;
  std::size_t rows_ = 0;
  Matrix output_, d_input_, d_part_;
};

class Noop final : public Layer {
 public:
  explicit Noop(std::size_t width) : width_(width) {}
  std::string kind() const override { return "noop"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void reserve(std::size_t) override {}
  ConstMatrixMap forward(const ConstMatrixMap& input, bool, Random&) override { return input; }
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool) override { return d_output; }

 private:
  std::size_t width_;
};

}  // namespace psgrad
