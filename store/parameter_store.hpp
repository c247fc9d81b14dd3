// The weights and optimizer a parameter server holds, and its step: plain C++, no actors or messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/buffer_pool.hpp"
#include "model/optimizer.hpp"
#include "model/parameter_layout.hpp"

namespace psgrad {

// Holds the floats [begin, end) of a model's layout (all of them, or one shard's) with an optimizer
// restricted to them. Weights once handed out (weights()) are never written again while anyone holds
// them: a step then reads them and writes a free buffer of its pool, and otherwise steps in place.
class ParameterStore {
 public:
  // `weights` holds end - begin floats (end 0: the whole layout); `version` counts the steps taken.
  ParameterStore(ParameterLayout layout, std::vector<float> weights, std::unique_ptr<Optimizer> optimizer,
                 std::size_t begin = 0, std::size_t end = 0, std::uint64_t version = 0);

  const ParameterLayout& layout() const { return layout_; }
  std::size_t begin() const { return begin_; }
  std::size_t end() const { return end_; }
  std::size_t size() const { return end_ - begin_; }
  // Holds part of the layout: one of several shards.
  bool sharded() const { return begin_ != 0 || end_ != layout_.total_size(); }
  std::uint64_t version() const { return version_; }

  // The current weights, shared with the caller (size() floats).
  const std::shared_ptr<float>& weights() const { return current_; }
  OptimizerState optimizer_state() const { return optimizer_->state(); }
  // The optimizer's weight averages of the floats held (size() of them), or null when it keeps none.
  const float* averages() const { return optimizer_->averages(); }
  // The ranges of gradients held elsewhere whose sums of squares each step needs (foreign_squares).
  std::vector<GradientRange> foreign_norm_ranges() const { return optimizer_->foreign_norm_ranges(); }
  // From now on each step's passes may be split in two, the second half run by `runner`.
  void split_steps_with(TwoPartRunner* runner) { optimizer_->split_steps_with(runner); }

  // One optimizer step from the sum of `count` gradients (size() floats each), added in the given order;
  // `foreign_squares` holds one sum of squares per foreign_norm_ranges() range (null when there are
  // none). `loss` is the loss the gradients came with. `into`, when given, is where the new weights go
  // (a buffer others read without holding it, such as a slot of shared memory): the step after it
  // will not write there in place. Returns why the step was refused or diverged: a non-finite loss
  // leaves the weights untouched; non-finite gradients or weights stop the run.
  std::optional<std::string> apply_gradients(const float* const* gradients, std::size_t count,
                                             const double* foreign_squares, float loss,
                                             std::shared_ptr<float> into = nullptr);
  std::optional<std::string> apply_gradients(const std::vector<const float*>& gradients,
                                             const std::vector<double>& foreign_squares, float loss) {
    return apply_gradients(gradients.data(), gradients.size(), foreign_squares.data(), loss);
  }

 private:
  ParameterLayout layout_;
  std::unique_ptr<Optimizer> optimizer_;
  std::size_t begin_;
  std::size_t end_;
  std::uint64_t version_;
  BufferPool pool_;
  // A buffer of pool_ (which holds it too), or the buffer a step was told to write (`into`).
  std::shared_ptr<float> current_;
  bool current_read_outside_ = false;  // current_ is `into`: others may read it without holding it
};

// Where `count` contiguous shards split the layout: count + 1 float offsets from 0 to the total, each
// cut as near total x i / count as the points allowed let it: array starts, and every `grain` floats
// into an array (the norm grid, norm_chunk_size, keeps sums bit-identical to one server; a grain beyond
// every array's size cuts on array boundaries only). Empty when there are fewer allowed points than
// shards.
std::vector<std::size_t> shard_cuts(const ParameterLayout& layout, std::size_t count, std::size_t grain);
// The most shards shard_cuts can make of the layout with that grain.
std::size_t max_shard_count(const ParameterLayout& layout, std::size_t grain);

}  // namespace psgrad
