// Parses the config as the command line does, prepares the run through apps/ (prepare_run_with_data),
// trains on a thread of its own while Python keeps its GIL and its Ctrl-C, and returns what it made.
#include "python/train_binding.hpp"

#include <map>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "apps/checkpointing.hpp"
#include "apps/local_run.hpp"
#include "apps/model_saving.hpp"
#include "apps/run_hooks.hpp"
#include "apps/weights_file.hpp"
#include "model/table_graph.hpp"
#include "model/fnv1a.hpp"
#include "model/registry.hpp"
#include "python/array_data.hpp"
#include "python/config_arguments.hpp"
#include "python/errors.hpp"
#include "python/model_binding.hpp"
#include "python/progress_relay.hpp"
#include "python/signal_checks.hpp"

namespace psgrad::python {

namespace py = pybind11;

namespace {

// The kept weights (the best evaluated with training.save_best) as a model, described as the run's
// model file would describe them.
std::shared_ptr<PythonModel> trained_model(const PreparedRun& run, const Weights& kept) {
  auto model = build_model(run.config, run.data.train->width, run.data.train->num_classes);
  if (!model) throw FailedError(model.error());
  model->set_weights(kept.values.data(), kept.values.size());
  return std::make_shared<PythonModel>(
      LoadedModel{"from psgrad.train", model_file_header(run, kept.version), run.config, std::move(model).value()});
}

py::dict train(const std::string& config_source, bool config_is_path, const py::array& x, const py::array& y,
               const py::array& dev_x, const py::array& dev_y, const std::vector<std::string>& overrides,
               const std::vector<py::tuple>& settings, const py::object& on_progress, const std::string& resume_path,
               const std::map<std::string, std::string>& outputs) {
  auto config = read_config(config_source, config_is_path, overrides, flag_settings(settings), resume_path);
  if (!config) throw InputError(config.error());
  if (model_has_tables(config->model))
    throw InputError(fmt::format("{}: model.@layers \"{}\" has embedding tables: pass X as named columns (a pandas "
                                 "DataFrame or a dict of arrays), as [data.columns] declares them",
                                 config->source, config->model.architecture));
  for (const auto& note : config->notes)
    if (PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 2) != 0) throw py::error_already_set();
  auto data = split_from_arrays(x, y, dev_x, dev_y, config->data.scale);
  if (!data) throw InputError(data.error());
  RunOptions options;
  options.verbosity = Verbosity::silent;  // the caller has the records, and prints what it likes
  apply_outputs(outputs, options);        // metrics, TensorBoard and trace files only where asked for
  auto prepared = prepare_run_with_data(options, std::move(config).value(), std::move(data).value());
  if (!prepared) throw InputError(prepared.error());
  auto& run = *prepared;
  auto resume = load_resume(resume_path, run);
  if (!resume) throw InputError(resume.error());

  const StopRequest stop;
  ProgressRelay relay(on_progress, stop.request());
  DriverHooks hooks;
  // Saved only where training.checkpoint_path is set: no runs/ folder appears beside a script.
  attach_run_hooks(hooks, run, stop.flag, false, "psgrad");
  const auto summary = train_checking_signals<TrainedRun>(
      [&] {
        auto actor_config = local_actor_config(run);  // the system keeps a reference to it
        caf::actor_system system{actor_config};
        return train_locally(system, run, std::move(hooks), *resume,
                             [&relay](const EvaluationReport& report) { relay.report(report); });
      },
      stop, [&](const Result<TrainedRun>& ended) { finish_interrupted_outputs(run, options, ended); });
  // An exception from on_progress stopped the run: its outputs end as an interrupted run's, then it goes on.
  if (relay.failed()) finish_interrupted_outputs(run, options, summary);
  relay.raise_if_failed();
  if (!summary) {
    run.output->fail(summary.error());
    throw FailedError("training failed: " + summary.error());
  }
  const auto& done = summary->run;
  run.output->finish(done);
  write_trace_output(run, options);
  py::dict result;
  result["records"] = relay.records();
  result["summary"] = summary_record(done);
  result["accuracy"] = done.final_accuracy;
  result["weights_hash"] = hash_hex(weights_hash(done.final_weights.values));
  result["model"] = trained_model(run, kept_weights(done, run));
  return result;
}

}  // namespace

void bind_training(py::module_& module) {
  module.def("train", &train, py::arg("config"), py::arg("config_is_path"), py::arg("x"), py::arg("y"),
             py::arg("dev_x"), py::arg("dev_y"), py::arg("overrides"), py::arg("settings"), py::arg("on_progress"),
             py::arg("resume"), py::arg("outputs") = std::map<std::string, std::string>{},
             "The core of psgrad.train, which documents it.");
}

}  // namespace psgrad::python
