// `psgrad eval --model M [--data D]`: a saved model's accuracy, per-class accuracy and confusion matrix.
#pragma once

#include <string>

#include "apps/command.hpp"

namespace psgrad {

struct EvalOptions {
  std::string model_path;
  std::string data;      // a folder of IDX files or a named data set; empty: the model's own data set
  std::string data_dir;  // where named data sets live (default $PSGRAD_DATA, else ./data)
};

Command add_eval_command(CLI::App& app);
int run_eval_command(const EvalOptions& options);

}  // namespace psgrad
