// What a run ends with, whatever its model's parameter kinds: the driver's summary, and every table's rows.
#pragma once

#include <vector>

#include "model/sparse_rows.hpp"
#include "payloads/messages.hpp"

namespace psgrad {

struct TrainedRun {
  TrainingSummary run;             // final_weights: the dense arrays
  std::vector<SparseRows> tables;  // a model with tables: per field, every row its table holds at the end, in key order
};

}  // namespace psgrad
