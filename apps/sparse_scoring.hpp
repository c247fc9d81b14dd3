// `psgrad predict` and `psgrad eval` for a model file with embedding tables (io/model_file.hpp).
#pragma once

#include "apps/eval_command.hpp"
#include "apps/predict_command.hpp"

namespace psgrad {

// Each example's row, predicted class name and probabilities, in the --format asked for.
int run_sparse_predict(const PredictOptions& options);
// Accuracy on --data (labelled, every label one of the model's classes), else on the dev split of the
// data the model was trained on.
int run_sparse_eval(const EvalOptions& options);

}  // namespace psgrad
