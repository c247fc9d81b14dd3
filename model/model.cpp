#include "model/model.hpp"

#include "model/model_layers.hpp"
#include <cmath>
#include <map>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

#include "model/model_layers.hpp"

namespace psgrad {

Model::Model(LayerChain layers, std::string architecture)
    : architecture_(std::move(architecture)), layers_(std::move(layers)) {
  if (layers_.empty()) throw std::invalid_argument("a model needs at least one layer");
  std::map<std::string, int> ordinals;
  for (auto& layer : layers_) {
    const auto kind = layer->kind();
    layer->declare_parameters(fmt::format("{}{}", kind, ++ordinals[kind]), layout_);
  }
  weights_.assign(layout_.total_size(), 0.0f);
  gradients_.assign(layout_.total_size(), 0.0f);
  // The vectors are never resized again, so the layers' views stay valid (also across moves).
  bind_buffers(weights_.data(), gradients_.data());
}

void Model::bind_buffers(const float* weights, float* gradients) {
  if (weights == bound_weights_ && gradients == bound_gradients_) return;
  // Layers write weights only in initialize(), which runs on the model's own buffer; on a caller's
  // buffer they only read it.
  for (auto& layer : layers_) layer->bind(const_cast<float*>(weights), gradients, layout_);
  bound_weights_ = weights;
  bound_gradients_ = gradients;
}

Result<Model> Model::build(const std::string& architecture, const Settings& settings,
                           std::size_t input_width, std::size_t output_width) {
  ModelSection model;
  model.architecture = architecture;
  model.settings = settings;
  return build(model, input_width, output_width);
}

Result<Model> Model::build(const ModelSection& model, std::size_t input_width, std::size_t output_width) {
  auto layers = model_layers(model, input_width, output_width);
  if (!layers) return Error{layers.error()};
  return Model(std::move(*layers), model.architecture);
}

void Model::initialize(std::uint64_t seed) {
  bind_buffers(weights_.data(), gradients_.data());
  Random rng(seed);
  for (auto& layer : layers_) layer->initialize(rng);
}

void Model::reserve(std::size_t max_batch) {
  if (max_batch <= reserved_rows_) return;
  for (auto& layer : layers_) layer->reserve(max_batch);
  d_logits_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(output_width()));
  reserved_rows_ = max_batch;
}

std::size_t Model::input_width() const { return layers_.front()->input_width(); }
std::size_t Model::output_width() const { return layers_.back()->output_width(); }

void Model::set_weights(const float* weights, std::size_t size) {
  if (size != weights_.size())
    throw std::invalid_argument(fmt::format("set_weights: got {} floats, the model has {}", size,
                                            weights_.size()));
  std::copy(weights, weights + size, weights_.begin());
}

ConstMatrixMap Model::forward(const ConstMatrixMap& inputs, bool is_train, Random& rng) {
  if (static_cast<std::size_t>(inputs.cols()) != input_width())
    throw std::invalid_argument(fmt::format("model expects {} input features, got {}",
                                            input_width(), inputs.cols()));
  reserve(static_cast<std::size_t>(inputs.rows()));
  ConstMatrixMap activations = inputs;
  for (auto& layer : layers_) new (&activations) ConstMatrixMap(layer->forward(activations, is_train, rng));
  return activations;
}

float Model::compute_gradients(const ConstMatrixMap& inputs, const ConstMatrixMap& targets,
                               Random& dropout_rng) {
  bind_buffers(weights_.data(), gradients_.data());
  return backpropagate(inputs, targets, dropout_rng);
}

float Model::compute_gradients(const float* weights, float* gradients, const ConstMatrixMap& inputs,
                               const ConstMatrixMap& targets, Random& dropout_rng) {
  bind_buffers(weights, gradients);
  return backpropagate(inputs, targets, dropout_rng);
}

float Model::backpropagate(const ConstMatrixMap& inputs, const ConstMatrixMap& targets,
                           Random& dropout_rng) {
  const auto n = inputs.rows();
  const ConstMatrixMap probs = forward(inputs, true, dropout_rng);
  MatrixMap d_logits(d_logits_.data(), n, static_cast<Eigen::Index>(output_width()));
  const float inverse_n = 1.0f / static_cast<float>(n);
  d_logits = (probs - targets) * inverse_n;
  // Cross-entropy of the true class only: log of a clamped probability keeps it finite.
  const double loss =
      -(targets.array() * probs.array().max(1e-12f).log()).cast<double>().sum() / static_cast<double>(n);
  ConstMatrixMap gradient(d_logits.data(), n, d_logits.cols());
  for (std::size_t i = layers_.size(); i-- > 0;)
    new (&gradient) ConstMatrixMap(layers_[i]->backward(gradient, i > 0));
  return static_cast<float>(loss);
}

ConstMatrixMap Model::predict(const ConstMatrixMap& inputs) {
  bind_buffers(weights_.data(), gradients_.data());
  return forward(inputs, false, no_dropout_rng_);
}

Evaluation Model::evaluate(const ConstMatrixMap& inputs, const ConstMatrixMap& targets,
                           std::size_t batch_size) {
  return evaluate(weights_.data(), inputs, targets, batch_size);
}

Evaluation Model::evaluate(const float* weights, const ConstMatrixMap& inputs, const ConstMatrixMap& targets,
                           std::size_t batch_size) {
  bind_buffers(weights, gradients_.data());
  if (batch_size == 0) throw std::invalid_argument("evaluate: batch_size must be positive");
  Evaluation result;
  std::size_t correct = 0;
  double loss_sum = 0.0;
  const auto total = static_cast<std::size_t>(inputs.rows());
  for (std::size_t start = 0; start < total; start += batch_size) {
    const auto rows = static_cast<Eigen::Index>(std::min(batch_size, total - start));
    const ConstMatrixMap x(inputs.data() + start * inputs.cols(), rows, inputs.cols());
    const ConstMatrixMap y(targets.data() + start * targets.cols(), rows, targets.cols());
    const ConstMatrixMap probs = forward(x, false, no_dropout_rng_);
    for (Eigen::Index r = 0; r < rows; ++r) {
      Eigen::Index guess, truth;
      probs.row(r).maxCoeff(&guess);
      y.row(r).maxCoeff(&truth);
      correct += guess == truth;
      loss_sum -= std::log(std::max(probs(r, truth), 1e-12f));
    }
  }
  result.count = total;
  result.accuracy = total ? static_cast<double>(correct) / static_cast<double>(total) : 0.0;
  result.loss = total ? loss_sum / static_cast<double>(total) : 0.0;
  return result;
}

}  // namespace psgrad
