// The optimizer interface: one step from a gradient buffer laid out like the weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/parameter_layout.hpp"

namespace psgrad {

// Everything an optimizer needs to continue exactly where it stopped (for checkpoints).
struct OptimizerState {
  std::vector<float> buffers;         // e.g. Adam's first and second moments, averages
  std::vector<std::uint64_t> counts;  // step counter per parameter array
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  // One optimizer step: updates weights in place from gradients (both laid out by the layout).
  virtual void apply_gradients(float* weights, const float* gradients) = 0;
  // Parameter averages (EMA), when the optimizer keeps them; nullptr otherwise.
  virtual const float* averages() const { return nullptr; }

  virtual OptimizerState state() const = 0;
  // False when the state does not fit this optimizer's layout.
  virtual bool set_state(const OptimizerState& state) = 0;
};

}  // namespace psgrad
