// The config a train or serve run starts from: its --config file, or the config inside the checkpoint it
// resumes, with the command line's --set and flags on top.
#pragma once

#include <string>
#include <vector>

#include "io/config.hpp"
#include "model/result.hpp"

namespace psgrad {

// Without config_path, `--resume CHECKPOINT` alone continues the run the checkpoint holds: its config,
// every --set it was started with included, is the base, and each key the command line changes is
// reported in a note ("resuming c.ckpt's run with training.iterations = 300 (it had 5000)").
Result<Config> load_run_config(const std::string& config_path, const std::string& resume_path,
                               const std::vector<std::string>& overrides, const std::vector<FlagSetting>& flags);

// The keys whose rendered values differ between two rendered configs, as "section.key = new (it had old)".
std::vector<std::string> changed_settings(const std::string& before, const std::string& after);

}  // namespace psgrad
