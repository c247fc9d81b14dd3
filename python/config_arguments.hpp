// A config from the Python side, read as the command line reads one: text or a path, with the
// overrides and the keyword arguments that stand for config keys (mode, workers, seed, ...).
#pragma once

#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "io/config.hpp"

namespace psgrad::python {

// (argument name, config key, value) from the Python side: each is applied after the overrides and
// gets the key's checks, as the command line's --mode and --workers.
std::vector<FlagSetting> flag_settings(const std::vector<pybind11::tuple>& settings);

// The config text or file; with neither (config empty, not a path) and a checkpoint to resume, that
// checkpoint's own run, as `psgrad train --resume CKPT` alone continues it.
Result<Config> read_config(const std::string& config, bool is_path, const std::vector<std::string>& overrides,
                           const std::vector<FlagSetting>& flags, const std::string& resume_path = "");

}  // namespace psgrad::python
