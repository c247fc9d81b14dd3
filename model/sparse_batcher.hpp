// Shuffled minibatches over a shared SparseDataset, as Minibatcher serves dense ones: a new permutation
// every epoch from a seeded generator, the last partial batch kept; each batch one RaggedIds per id field,
// the examples' rows of numbers and one-hot targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/matrix.hpp"
#include "model/minibatcher.hpp"
#include "model/ragged_ids.hpp"
#include "model/random.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

struct SparseBatch {
  std::vector<RaggedIds> fields;  // one per id field, in the data set's order
  std::vector<float> numbers;     // size x the data set's number columns, row-major, as read
  Matrix targets;                 // size x num_classes, one-hot
  std::size_t size = 0;
};

// Why a data set cannot be batched (no examples, a label without a class, a field without a bag for
// every example, numbers missing or not finite), or nothing.
std::optional<std::string> sparse_dataset_problem(const SparseDataset& data);

// Every id field's bags and the numbers of the examples [begin, begin + count) in `order` (all examples when order is
// empty), with their one-hot targets: a batch, or the dev set in one piece.
SparseBatch gather_examples(const SparseDataset& data, const std::vector<std::uint32_t>& order, std::size_t begin,
                            std::size_t count);

class SparseBatcher {
 public:
  // Where the stream stands: the same record as a dense stream's, so checkpoints keep one format.
  using Position = Minibatcher::Position;

  // The data set must pass sparse_dataset_problem (a mistake otherwise: throws).
  SparseBatcher(std::shared_ptr<const SparseDataset> data, std::size_t batch_size, std::uint64_t seed);

  SparseBatch next();

  Position position() const;
  void restore(const Position& position);

 private:
  std::shared_ptr<const SparseDataset> data_;
  std::size_t batch_size_;
  ShuffledOrder order_;
};

}  // namespace psgrad
