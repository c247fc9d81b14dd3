// A run's evaluations for Python: each as a dict (the metrics file's "eval" line), kept in a list and
// handed to the caller's on_progress.
#pragma once

#include <functional>
#include <optional>

#include <pybind11/pybind11.h>

#include "actors/evaluator.hpp"
#include "payloads/messages.hpp"

namespace psgrad::python {

// The metrics file's records as dicts, keyed as in its lines (without "type").
pybind11::dict eval_record(const EvaluationReport& report);
pybind11::dict summary_record(const TrainingSummary& summary);

class ProgressRelay {
 public:
  // Call with the GIL held; on_progress may be None. request_stop asks the run to stop and save.
  ProgressRelay(pybind11::object on_progress, std::function<void()> request_stop);

  // From any thread, without the GIL (it is taken here). When on_progress raises, the run is asked
  // to stop and the exception kept for raise_if_failed; later evaluations are only recorded.
  void report(const EvaluationReport& report);
  // With the GIL held, once the run has ended.
  pybind11::list records() const { return records_; }
  void raise_if_failed();
  // Whether on_progress raised (raise_if_failed will throw).
  bool failed() const { return raised_.has_value(); }

 private:
  pybind11::object on_progress_;
  std::function<void()> request_stop_;
  pybind11::list records_;
  std::optional<pybind11::error_already_set> raised_;  // under the GIL
};

}  // namespace psgrad::python
