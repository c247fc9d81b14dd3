// The first layer of a tables model's dense part. It passes the pooled embeddings on and keeps the
// gradient that comes back for them (the dense layer after it computes that gradient, being second),
// and it holds the layers each column's ids pass through before their pooling, so that their
// parameters lie in the dense buffer with the rest, first, as in Thinc's walk of the model.
#pragma once

#include <vector>

#include "model/combinators.hpp"

namespace psgrad {

class FrontLayers final : public Layer {
 public:
  FrontLayers(std::size_t width, std::vector<LayerList> columns);

  std::string kind() const override { return "input"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void declare_parameters(const std::string& layer_name, ParameterLayout& layout) override;
  void bind(float* weights, float* gradients, const ParameterLayout& layout) override;
  void initialize(Random& rng) override;
  // The columns' layers are sized by the ids of a batch, which SparseModel reserves for.
  void reserve(std::size_t) override {}

  ConstMatrixMap forward(const ConstMatrixMap& input, bool, Random&) override { return input; }
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool) override {
    gradient_ = d_output.data();
    rows_ = d_output.rows();
    return d_output;
  }

  // The last backward's gradient (rows x width), valid until the chain's next forward or backward.
  ConstMatrixMap input_gradient() const { return ConstMatrixMap(gradient_, rows_, static_cast<Eigen::Index>(width_)); }
  // Column f's layers between its HashEmbed and its pooling; empty: none.
  LayerList& column(std::size_t f) { return columns_[f]; }
  const LayerList& column(std::size_t f) const { return columns_[f]; }

 private:
  std::size_t width_;
  std::vector<LayerList> columns_;
  const float* gradient_ = nullptr;
  Eigen::Index rows_ = 0;
};

}  // namespace psgrad
