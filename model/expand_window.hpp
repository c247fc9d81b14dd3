// Thinc's expand_window.v1: each row becomes [row - n, ..., row, ..., row + n]
// side by side (zeros past an end), one step of a convolution over a sequence. On an array (Thinc's
// Floats2d, as with_array hands it) the whole array is one sequence; on a Ragged each sequence's
// windows stop at its own ends.
#pragma once

#include <vector>

#include "model/layer.hpp"

namespace psgrad {

class ExpandWindow final : public Layer {
 public:
  // ragged: windows stop at the sequence ends set_sequences gives; else the array is one sequence.
  ExpandWindow(std::size_t width, std::size_t window_size, bool ragged);

  std::string kind() const override { return "expand_window"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_ * (2 * window_ + 1); }
  bool ragged() const { return ragged_; }
  // The sequences of the next forward: sequence s is rows [offsets[s], offsets[s + 1]). Kept by pointer.
  void set_sequences(const std::vector<std::size_t>* offsets) { offsets_ = offsets; }
  void reserve(std::size_t max_batch) override;
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;

 private:
  // Calls visit(row, block, source) for every block of every output row whose source row exists.
  template <class Visit>
  void each_window(std::size_t rows, Visit visit) const;

  std::size_t width_, window_;
  bool ragged_;
  const std::vector<std::size_t>* offsets_ = nullptr;
  std::size_t rows_ = 0;
  Matrix output_, d_input_;
};

}  // namespace psgrad
