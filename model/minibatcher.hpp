// Shuffled minibatches over a shared data set: a new permutation every epoch from a seeded generator,
// the last partial batch kept (as Thinc's ops.minibatch does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/aligned_floats.hpp"
#include "model/dataset.hpp"
#include "model/matrix.hpp"
#include "model/random.hpp"
#include "model/shuffled_order.hpp"

namespace psgrad {

class Minibatcher {
 public:
  struct Batch {
    ConstMatrixMap inputs;   // size x width
    ConstMatrixMap targets;  // size x num_classes
    std::size_t size;
  };
  // Where the stream stands, enough to continue it exactly (for checkpoints).
  using Position = ShuffledOrder::Position;

  Minibatcher(std::shared_ptr<const Dataset> data, std::size_t batch_size, std::uint64_t seed);

  // Gathers the next batch into buffers owned by the batcher (valid until the next call).
  Batch next();

  Position position() const;
  void restore(const Position& position);
  std::uint64_t epoch() const { return order_.epoch(); }

 private:
  std::shared_ptr<const Dataset> data_;
  std::size_t batch_size_;
  ShuffledOrder order_;
  AlignedFloats inputs_;
  AlignedFloats targets_;
};

}  // namespace psgrad
