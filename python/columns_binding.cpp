// Models with embedding tables from Python: their examples are named columns, which the package writes
// as JSON Lines files, so training, checking and predicting go through the command line's own readers.
#include "python/columns_binding.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "apps/checkpointing.hpp"
#include "apps/run_hooks.hpp"
#include "apps/local_run.hpp"
#include "apps/tables_scoring.hpp"
#include "apps/tables_run.hpp"
#include "apps/weights_file.hpp"
#include "io/sparse_examples.hpp"
#include "model/table_graph.hpp"
#include "model/enum_names.hpp"
#include "model/fnv1a.hpp"
#include "model/registry.hpp"
#include "model/table_optimizer.hpp"
#include "python/config_arguments.hpp"
#include "python/errors.hpp"
#include "python/progress_relay.hpp"
#include "python/signal_checks.hpp"

namespace psgrad::python {

namespace py = pybind11;

namespace {

py::list columns_of(const std::vector<DataColumn>& columns) {
  py::list out;
  for (const auto& column : columns) out.append(py::make_tuple(column.name, name_in(column_kind_names, column.kind)));
  return out;
}

// The label's name and the declared columns, for the package to write the examples by: refused in one
// line for a model without tables, which reads a matrix of features.
py::dict columns_layout(const std::string& config_source, bool config_is_path, const std::vector<std::string>& overrides,
                        const std::vector<py::tuple>& settings, const std::string& resume_path) {
  // The examples are X, not a file: the path only stands in for the file train_columns writes.
  auto flags = flag_settings(settings);
  flags.push_back({"X", "data.path", SettingValue{std::string("X")}});
  auto config = read_config(config_source, config_is_path, overrides, flags, resume_path);
  if (!config) throw InputError(config.error());
  if (!model_has_tables(config->model))
    throw InputError(fmt::format("{}: model.@layers \"{}\" reads a matrix of features: pass X as a NumPy array "
                                 "(named columns feed the embedding tables of {})",
                                 config->source, config->model.architecture,
                                 fmt::join(architecture_names_with_tables(), ", ")));
  if (config->data.columns.empty())
    throw InputError(fmt::format("{}: [data.columns] declares no columns; name each column the model reads (\"text\", "
                                 "\"ids\" or \"number\")",
                                 config->source));
  py::dict layout;
  layout["label"] = config->data.label;
  layout["columns"] = columns_of(config->data.columns);
  return layout;
}

py::dict train_columns(const std::string& config_source, bool config_is_path, const std::string& train_path,
                       const std::string& dev_path, const std::vector<std::string>& overrides,
                       const std::vector<py::tuple>& settings, const py::object& on_progress,
                       const std::string& resume_path, const std::string& model_path,
                       const std::map<std::string, std::string>& outputs) {
  auto flags = flag_settings(settings);
  flags.push_back({"X", "data.path", SettingValue{train_path}});
  if (!dev_path.empty()) {
    flags.push_back({"dev", "data.dev_path", SettingValue{dev_path}});
    flags.push_back({"dev", "data.dev_fraction", SettingValue{0.0}});
  }
  auto config = read_config(config_source, config_is_path, overrides, flags, resume_path);
  if (!config) throw InputError(config.error());
  for (const auto& note : config->notes)
    if (PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 2) != 0) throw py::error_already_set();
  RunOptions options;
  options.verbosity = Verbosity::silent;  // the caller has the records
  apply_outputs(outputs, options);  // metrics, TensorBoard and trace files only where asked for
  auto prepared = prepare_tables_run(options, std::move(config).value());
  if (!prepared) throw InputError(prepared.error());
  auto& run = *prepared;
  auto resume = load_resume(resume_path, run, resuming_model_of(run));
  if (!resume) throw InputError(resume.error());

  const StopRequest stop;
  ProgressRelay relay(on_progress, stop.request());
  DriverHooks hooks;
  hooks.interrupt = stop.flag;
  if (run.best) hooks.stop_early = run.best->stop_flag();
  hooks.trace = run.trace;
  // Saved only where training.checkpoint_path is set: no runs/ folder appears beside a script.
  hooks.on_checkpoint = checkpoint_writer(run, nullptr, run.tables->table_floats);
  hooks.checkpoints_on_signal_only = checkpoints_on_signal_only(run);
  const auto outcome = train_checking_signals<TrainedRun>(
      [&] {
        auto actor_config = local_actor_config(run);  // the system keeps a reference to it
        caf::actor_system system{actor_config};
        return train_locally(system, run, std::move(hooks), std::move(*resume),
                                    [&relay](const EvaluationReport& report) { relay.report(report); });
      },
      stop, [&](const Result<TrainedRun>& ended) { finish_interrupted_outputs(run, options, ended); });
  // An exception from on_progress stopped the run: its outputs end as an interrupted run's, then it goes on.
  if (relay.failed()) finish_interrupted_outputs(run, options, outcome);
  relay.raise_if_failed();
  if (!outcome) {
    run.output->fail(outcome.error());
    throw FailedError("training failed: " + outcome.error());
  }
  const auto& done = outcome.value();
  run.output->finish(done.run);
  write_trace_output(run, options);
  if (auto saved = save_tables_model(model_path, run, done, kept_weights(done.run, run)); !saved) throw FailedError(saved.error());
  py::dict result;
  result["records"] = relay.records();
  result["summary"] = summary_record(done.run);
  result["accuracy"] = done.run.final_accuracy;
  result["weights_hash"] = hash_hex(weights_hash(done.run.final_weights.values));
  return result;
}

}  // namespace

py::array_t<float> PythonTablesModel::predict_file(const std::string& path) {
  auto examples = read_sparse_examples(path, model_layout(loaded_.file, true));
  if (!examples) throw InputError(examples.error());
  // Unlabelled: every example gets class 0 as a placeholder target, which predicting never reads.
  examples->class_names = loaded_.file.tables->class_names;
  examples->labels.assign(examples->count, 0);
  std::vector<float> probabilities;
  {
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> lock(mutex_);
    probabilities = predict_examples(loaded_, *examples);
  }
  const auto classes = static_cast<py::ssize_t>(loaded_.file.tables->class_names.size());
  py::array_t<float> out({static_cast<py::ssize_t>(examples->count), classes});
  std::copy(probabilities.begin(), probabilities.end(), out.mutable_data());
  return out;
}

void PythonTablesModel::save(const std::filesystem::path& path) const {
  if (auto saved = write_model_file(path.string(), loaded_.file); !saved) throw FailedError(saved.error());
}

void bind_columns(py::module_& module) {
  py::class_<PythonTablesModel, std::shared_ptr<PythonTablesModel>> model(
      module, "TablesModel", "The core of psgrad.TablesModel, which documents it.");
  model.def("predict_file", &PythonTablesModel::predict_file, py::arg("path"))
      .def("save", &PythonTablesModel::save, py::arg("path"))
      .def_property_readonly("class_names", [](const PythonTablesModel& self) { return self.loaded().file.tables->class_names; })
      .def_property_readonly("label", [](const PythonTablesModel& self) { return self.loaded().file.tables->label; })
      .def_property_readonly("columns", [](const PythonTablesModel& self) { return columns_of(self.loaded().file.tables->columns); })
      .def_property_readonly("architecture", [](const PythonTablesModel& self) { return self.loaded().file.header.architecture; })
      .def_property_readonly("version", [](const PythonTablesModel& self) { return self.loaded().file.header.weights_version; })
      .def_property_readonly("config", [](const PythonTablesModel& self) { return self.loaded().file.header.config_text; })
      .def("table",
           [](const PythonTablesModel& self, std::size_t field) {
             if (field >= self.loaded().model.fields().size())
               throw InputError(fmt::format("table: the model has {} tables, not {}", self.loaded().model.fields().size(),
                                            field + 1));
             auto values = whole_table(self.loaded(), field);
             if (!values) throw InputError(values.error());
             const auto width = static_cast<py::ssize_t>(self.loaded().model.fields()[field].width);
             py::array_t<float> out({static_cast<py::ssize_t>(values->size()) / width, width});
             std::copy(values->begin(), values->end(), out.mutable_data());
             return out;
           },
           py::arg("field"))
      .def("dense_weights", [](const PythonTablesModel& self) {
        py::list arrays;
        const auto& dense = self.loaded().model.dense();
        for (const auto& array : dense.layout().arrays()) {
          py::array_t<float> copy({static_cast<py::ssize_t>(array.rows), static_cast<py::ssize_t>(array.cols)});
          std::copy_n(dense.weights().data() + array.offset, array.size(), copy.mutable_data());
          arrays.append(copy);
        }
        return arrays;
      });
  module.def("columns_layout", &columns_layout, py::arg("config"), py::arg("config_is_path"), py::arg("overrides"),
             py::arg("settings"), py::arg("resume") = "");
  module.def("train_columns", &train_columns, py::arg("config"), py::arg("config_is_path"), py::arg("train_path"),
             py::arg("dev_path"), py::arg("overrides"), py::arg("settings"), py::arg("on_progress"), py::arg("resume"),
             py::arg("model_path"), py::arg("outputs") = std::map<std::string, std::string>{},
             "The core of psgrad.train for a model with embedding tables.");
  module.def("is_tables_model_file", [](const std::filesystem::path& path) { return model_file_has_tables(path.string()); },
             py::arg("path"));
  module.def(
      "load_tables",
      [](const std::filesystem::path& path) {
        auto loaded = load_tables_model(path.string());
        if (!loaded) throw InputError(loaded.error());
        return std::make_shared<PythonTablesModel>(std::move(loaded).value());
      },
      py::arg("path"));
}

}  // namespace psgrad::python
