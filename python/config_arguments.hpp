// A config from the Python side, read as the command line reads one: text or a path, with the
// overrides and the keyword arguments that stand for config keys (mode, workers, seed, ...).
#pragma once

#include <map>

#include "actors/trained_run.hpp"
#include "apps/run_setup.hpp"

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

// The files a Python run writes as the command line's run writes them: "metrics" (the metrics file),
// "tensorboard" (an event-file folder), "trace" (a Chrome trace); absent: none. Unknown keys are a
// programmer mistake of the package.
void apply_outputs(const std::map<std::string, std::string>& outputs, RunOptions& options);

// Writes the run's trace where "trace" asked for it; the error names the file.
void write_trace_output(const PreparedRun& run, const RunOptions& options);

// A run that Ctrl-C (KeyboardInterrupt) stopped: its metrics file and trace end as the command line's do,
// with the interruption (naming the checkpoint, where training.checkpoint_path is set) and the summary,
// before the exception reaches the caller. Nothing here throws: the exception in flight goes on.
void finish_interrupted_outputs(const PreparedRun& run, const RunOptions& options, const Result<TrainedRun>& outcome);

}  // namespace psgrad::python
