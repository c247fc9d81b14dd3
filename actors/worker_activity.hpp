// Per-worker mean compute and wait times as a run goes, from the timings workers send with gradients.
#pragma once

#include <cstdint>
#include <vector>

#include "payloads/messages.hpp"

namespace psgrad {

class WorkerActivity {
 public:
  // Compute: from the request's arrival to the gradient being ready (a simulated delay included).
  // Wait: from the worker having its next batch ready to the request's arrival (none before the first).
  void record(std::size_t worker, const WorkTiming& timing) {
    if (sums_.size() <= worker) sums_.resize(worker + 1);
    auto& sum = sums_[worker];
    if (timing.answered >= timing.received && timing.received > 0) {
      sum.compute_ns += static_cast<double>(timing.answered - timing.received);
      ++sum.computed;
    }
    if (timing.idle_since > 0 && timing.received >= timing.idle_since) {
      sum.wait_ns += static_cast<double>(timing.received - timing.idle_since);
      ++sum.waited;
    }
  }

  std::vector<double> mean_compute_ms(std::size_t workers) const {
    return means(workers, [](const Sums& s) { return s.computed ? s.compute_ns / 1e6 / double(s.computed) : 0.0; });
  }
  std::vector<double> mean_wait_ms(std::size_t workers) const {
    return means(workers, [](const Sums& s) { return s.waited ? s.wait_ns / 1e6 / double(s.waited) : 0.0; });
  }

 private:
  struct Sums {
    double compute_ns = 0.0, wait_ns = 0.0;
    std::uint64_t computed = 0, waited = 0;
  };

  template <class Mean>
  std::vector<double> means(std::size_t workers, Mean mean) const {
    std::vector<double> out(workers, 0.0);
    for (std::size_t k = 0; k < workers && k < sums_.size(); ++k) out[k] = mean(sums_[k]);
    return out;
  }

  std::vector<Sums> sums_;
};

}  // namespace psgrad
