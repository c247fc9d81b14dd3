// `psgrad train`: every actor in this process, or (--processes) worker processes on this machine.
#pragma once

#include "apps/command.hpp"
#include "apps/run_setup.hpp"

namespace psgrad {

struct TrainOptions : RunOptions {
  bool processes = false;  // run the workers as local processes over loopback
  std::string resume;      // a checkpoint to continue from
};

Command add_train_command(CLI::App& app);
int run_train_command(const TrainOptions& options);

}  // namespace psgrad
