// Several workers' gradients of one table summed per key, in worker order: the row half of a sync step.
#pragma once

#include <vector>

#include "model/sparse_rows.hpp"

namespace psgrad {

// The union of the gradients' keys, sorted; each key's row is the first gradient's (in the order given)
// that has it, plus each later one's that has it, in that order: ((g0 + g1) + g2) over the workers that
// touched the key, as a dense sum adds every worker's whole gradient. All must have the same width and
// sorted, unique keys (a mistake otherwise: throws).
SparseRows sum_row_gradients(const std::vector<const SparseRows*>& in_worker_order);

}  // namespace psgrad
