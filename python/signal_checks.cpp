// The waiting loop: a condition variable with a timeout, and PyErr_CheckSignals under the GIL.
#include "python/signal_checks.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include <pybind11/pybind11.h>

namespace psgrad::python {

namespace py = pybind11;

void run_checking_signals(const std::function<void()>& work, const std::function<void()>& request_stop) {
  constexpr auto check_every = std::chrono::milliseconds(100);
  std::mutex mutex;
  std::condition_variable ended;
  bool done = false;
  std::optional<py::error_already_set> raised;
  {
    py::gil_scoped_release released;
    std::thread worker([&] {
      work();
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
      ended.notify_all();
    });
    std::unique_lock<std::mutex> lock(mutex);
    while (!ended.wait_for(lock, check_every, [&] { return done; })) {
      if (raised) continue;  // stopping already; a second Ctrl-C waits its turn in Python
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) raised.emplace();  // takes the pending exception
      }
      if (raised) request_stop();
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (raised) throw std::move(*raised);
}

}  // namespace psgrad::python
