// Evaluation reports to dicts through the metrics file's own field lists, and the caller's callback.
#include "python/progress_relay.hpp"

#include <utility>

#include <pybind11/stl.h>

#include "apps/metrics_from_run.hpp"
#include "io/metrics_fields.hpp"

namespace psgrad::python {

namespace py = pybind11;

namespace {

template <class Fields>
py::dict dict_of(const Fields& fields) {
  py::dict record;
  for_each_field(fields, [&](const auto& field) { record[field.key] = py::cast(field.member); });
  return record;
}

}  // namespace

py::dict eval_record(const EvaluationReport& report) {
  const auto eval = metrics_eval(report);
  return dict_of(eval_fields(eval));
}

py::dict summary_record(const TrainingSummary& summary) {
  const auto record = metrics_summary(summary);
  return dict_of(summary_fields(record));
}

ProgressRelay::ProgressRelay(py::object on_progress, std::function<void()> request_stop)
    : on_progress_(std::move(on_progress)), request_stop_(std::move(request_stop)) {}

void ProgressRelay::report(const EvaluationReport& report) {
  py::gil_scoped_acquire gil;
  // Nothing may escape into the evaluator's thread: whatever Python raises here stops the run.
  try {
    auto record = eval_record(report);
    records_.append(record);
    // After a failure the run's last records still belong to the result, but on_progress is done.
    if (!on_progress_.is_none() && !raised_) on_progress_(record);
  } catch (py::error_already_set& error) {
    if (!raised_) raised_.emplace(std::move(error));
    request_stop_();
  } catch (const std::exception& error) {  // a record pybind11 could not convert
    if (!raised_) {
      PyErr_SetString(PyExc_RuntimeError, error.what());
      raised_.emplace();
    }
    request_stop_();
  }
}

void ProgressRelay::raise_if_failed() {
  if (!raised_) return;
  auto error = std::move(*raised_);
  raised_.reset();
  throw std::move(error);
}

}  // namespace psgrad::python
