// Top-k gradient compression with error feedback (Deep Gradient Compression, EF-SGD): a worker sends
// each parameter array's largest entries and keeps the rest as a residual added to its next gradient.
#pragma once

#include <cstddef>
#include <vector>

#include "model/parameter_layout.hpp"

namespace psgrad {

class TopKCompressor {
 public:
  // Keeps ceil(fraction x size) entries of every array (at least one); fraction in (0, 1].
  TopKCompressor(const ParameterLayout& layout, double fraction);

  // In place: adds the residual to `gradient`, keeps each array's k entries of largest magnitude
  // (ties broken by position, so the result is deterministic) and zeroes the others, which become
  // the residual. An array holding NaN or infinity is sent whole, so the server sees the divergence.
  void compress(float* gradient);

  const std::vector<float>& residual() const { return residual_; }
  std::size_t kept(std::size_t array) const { return keep_[array]; }
  std::size_t kept_total() const;

 private:
  ParameterLayout layout_;
  std::vector<std::size_t> keep_;   // per array
  std::vector<float> residual_;     // what earlier gradients did not send yet
  std::vector<float> magnitudes_;   // scratch for the selection
};

}  // namespace psgrad
