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

namespace psgrad {

class Minibatcher {
 public:
  struct Batch {
    ConstMatrixMap inputs;   // size x width
    ConstMatrixMap targets;  // size x num_classes
    std::size_t size;
  };
  // Where the stream stands, enough to continue it exactly (for checkpoints).
  struct Position {
    std::uint64_t epoch = 0;
    std::uint64_t cursor = 0;       // examples already served in this epoch
    Random::State epoch_rng{};      // generator state before this epoch's shuffle
  };

  Minibatcher(std::shared_ptr<const Dataset> data, std::size_t batch_size, std::uint64_t seed);

  // Gathers the next batch into buffers owned by the batcher (valid until the next call).
  Batch next();

  Position position() const;
  void restore(const Position& position);
  std::uint64_t epoch() const { return epoch_; }

 private:
  void shuffle();
  std::shared_ptr<const Dataset> data_;
  std::size_t batch_size_;
  Random rng_;
  Random::State epoch_rng_{};
  std::vector<std::uint32_t> order_;
  std::size_t cursor_ = 0;
  std::uint64_t epoch_ = 0;
  AlignedFloats inputs_;
  AlignedFloats targets_;
};

}  // namespace psgrad
