#include "python/config_arguments.hpp"

#include <cstring>

#include "apps/run_config.hpp"
#include "apps/trace_output.hpp"
#include "python/errors.hpp"

namespace psgrad::python {

namespace py = pybind11;

std::vector<FlagSetting> flag_settings(const std::vector<py::tuple>& settings) {
  std::vector<FlagSetting> flags;
  for (const auto& setting : settings) {
    const py::handle value = setting[2];
    SettingValue held;
    if (py::isinstance<py::bool_>(value)) held = value.cast<bool>();
    else if (py::isinstance<py::int_>(value)) held = value.cast<std::int64_t>();
    else if (py::isinstance<py::float_>(value)) held = value.cast<double>();
    else held = py::str(value).cast<std::string>();
    flags.push_back({setting[0].cast<std::string>(), setting[1].cast<std::string>(), std::move(held)});
  }
  return flags;
}

Result<Config> read_config(const std::string& config, bool is_path, const std::vector<std::string>& overrides,
                           const std::vector<FlagSetting>& flags, const std::string& resume_path) {
  if (!is_path && config.empty()) {
    if (resume_path.empty())
      return Error{"config: expected config text, a path, a dict or a thinc Config; or resume= alone to continue "
                   "a checkpoint's run"};
    return load_run_config("", resume_path, overrides, flags);
  }
  if (is_path) return load_config(config, overrides, flags);
  return parse_config(config, "<string>", overrides, flags);
}

void apply_outputs(const std::map<std::string, std::string>& outputs, RunOptions& options) {
  options.metrics_path = std::string();  // none unless asked: no runs/ folder appears beside a script
  for (const auto& [kind, path] : outputs) {
    if (kind == "metrics") options.metrics_path = path;
    else if (kind == "tensorboard") options.tensorboard_dir = path;
    else if (kind == "trace") options.trace_path = path;
    else throw std::logic_error("unknown output kind " + kind);
  }
}

void finish_interrupted_outputs(const PreparedRun& run, const RunOptions& options, const Result<TrainedRun>& outcome) {
  if (!outcome) {
    run.output->fail(outcome.error());
  } else {
    const auto& summary = outcome->run;
    // Python saves an interrupted run only where training.checkpoint_path is set (no runs/ beside a script).
    if (summary.interrupted_by != 0)
      run.output->interrupted(strsignal(summary.interrupted_by), summary.steps, run.config.training.checkpoint_path);
    run.output->finish(summary);
  }
  if (run.trace) (void)write_trace_file(options.trace_path, *run.trace);
}

void write_trace_output(const PreparedRun& run, const RunOptions& options) {
  if (!run.trace) return;
  if (auto written = write_trace_file(options.trace_path, *run.trace); !written) throw FailedError(written.error());
}

}  // namespace psgrad::python
