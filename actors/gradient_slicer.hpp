// Cuts the gradients pushed to server shards into what each shard takes: the floats of its range (a
// slice sharing the buffer in this process; only those floats on the wire) and the sums of squares of
// the chunks other shards hold of the arrays it shares with them, which its clip norms need.
//
// The sums are computed here with range_squares, the very arithmetic a shard used when it read them
// from the whole gradient, so clipping stays bit-identical to one server. A sync step clips the sum of
// the workers' gradients, whose norms the single gradients' norms cannot give: there the sums are of
// the gradients' sum in worker order, as the shard would add them, over the cut arrays' foreign chunks
// only; the first gradient of each shard's step carries them (slice of several gradients, for one
// apply of them all). Squares rather than the summed chunks themselves keep that to a few doubles per
// shard. Sync training pushes each gradient on its own, sliced without squares: there the shards
// gather a step's gradients themselves and exchange the squares of their sum (parameter_server.cpp).
//
// Wire encodings apply before the cut (GradientEncoder, on the worker): bf16 rounds the whole gradient
// and top-k picks each array's largest entries over all of it, its residual staying the worker's. So
// a shard gets exactly its part of what one server would, and any K trains the same; top-k per slice
// would pick a cut array's entries per part and send something else.
#pragma once

#include <cstddef>
#include <vector>

#include "payloads/messages.hpp"
#include "model/result.hpp"

namespace psgrad {

class GradientSlicer {
 public:
  // An error when the plans do not tile one layout in order, or name foreign chunks that are not.
  static Result<GradientSlicer> make(std::vector<ShardPlan> plans);

  std::size_t shard_count() const { return plans_.size(); }
  std::size_t total_size() const { return plans_.empty() ? 0 : plans_.back().end; }

  const std::vector<ShardPlan>& plans() const { return plans_; }

  // One gradient: each shard's part, in plan order, with the sums of squares of its foreign chunks
  // unless `with_squares` is false. An error when it does not hold total_size floats.
  Result<std::vector<Gradients>> slice(const Gradients& whole, bool with_squares = true);

 private:
  explicit GradientSlicer(std::vector<ShardPlan> plans);
  // Checks the gradient and, with `squares`, sums the squares of every cut chunk of it.
  Status take(const Gradients& gradient, bool squares);
  Gradients part(const Gradients& whole, std::size_t shard) const;
  std::vector<double> foreign_squares(std::size_t shard) const;

  std::vector<ShardPlan> plans_;
  std::vector<GradientRange> cut_chunks_;          // every plan's foreign chunks, each once
  std::vector<std::vector<std::size_t>> foreign_;  // per shard: its foreign chunks in cut_chunks_
  std::vector<double> squares_;                    // per cut chunk, of the push under way
  std::vector<float> scratch_;                     // one cut chunk of summed gradients
};

}  // namespace psgrad
