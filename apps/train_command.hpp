// `psgrad train`: one process, every actor local.
#pragma once

#include <string>
#include <vector>

namespace psgrad {

struct TrainOptions {
  std::string config_path;
  std::string mode;  // empty: the config's
  int workers = 0;   // 0: the config's
  std::vector<std::string> overrides;
  std::string data_dir;
  std::string save_weights;  // raw final weights, for tests and tools
};

int run_train_command(const TrainOptions& options);

}  // namespace psgrad
