// Long C++ work under Python: the GIL released, Ctrl-C still heard.
#pragma once

#include <atomic>
#include <csignal>
#include <exception>
#include <functional>
#include <memory>
#include <optional>

#include <pybind11/pybind11.h>

#include "model/result.hpp"

namespace psgrad::python {

// Runs `work` on a thread of its own while the calling thread waits with the GIL released, taking it
// back every 100 ms so that Python runs its signal handlers (Ctrl-C raises KeyboardInterrupt there).
// When a handler raises, request_stop() is called once and the work is still waited for: the
// exception reaches the caller only once the work has ended (and saved what it saves). `work` must not
// throw. Call with the GIL held.
void run_checking_signals(const std::function<void()>& work, const std::function<void()>& request_stop);

// What the command line's signal watch does for the first Ctrl-C: a flag the driver polls, set once.
struct StopRequest {
  std::shared_ptr<std::atomic<int>> flag = std::make_shared<std::atomic<int>>(0);
  std::function<void()> request() const {
    return [flag = flag] {
      int none = 0;
      flag->compare_exchange_strong(none, SIGINT);
    };
  }
};

// Runs a training run (`train` makes its actor system and trains) under run_checking_signals; whatever
// it throws becomes its failure. When a Python exception (Ctrl-C's KeyboardInterrupt) stopped it,
// on_interrupted sees how the run ended before the exception goes on to the caller.
template <class Summary>
Result<Summary> train_checking_signals(const std::function<Result<Summary>()>& train, const StopRequest& stop,
                                       const std::function<void(const Result<Summary>&)>& on_interrupted = {}) {
  std::optional<Result<Summary>> outcome;
  try {
    run_checking_signals(
        [&] {
          try {
            outcome = train();
          } catch (const std::exception& error) {
            outcome = Result<Summary>(Error{error.what()});
          } catch (...) {
            outcome = Result<Summary>(Error{"an unknown exception ended the run"});
          }
        },
        stop.request());
  } catch (const pybind11::error_already_set&) {
    if (on_interrupted && outcome) on_interrupted(*outcome);
    throw;
  }
  return std::move(*outcome);
}

}  // namespace psgrad::python
