// Staleness and training loss as a run goes, for its summary and each evaluation's progress record.
#pragma once

#include <algorithm>
#include <cstdint>

#include "payloads/messages.hpp"

namespace psgrad {

class RunStatistics {
 public:
  // The histogram's last bucket counts this staleness and more, so it stays small however long a run.
  static constexpr std::size_t kStalenessBuckets = 64;

  // Steps applied between the weights a gradient was computed from and the step that applied it.
  void record_staleness(double staleness, TrainingSummary& summary) {
    ++staleness_count_;
    summary.staleness_min = staleness_count_ == 1 ? staleness : std::min(summary.staleness_min, staleness);
    summary.staleness_max = std::max(summary.staleness_max, staleness);
    staleness_sum_ += staleness;
    summary.staleness_mean = staleness_sum_ / static_cast<double>(staleness_count_);
    auto& histogram = summary.workers.staleness_histogram;
    const auto bucket = std::min<std::size_t>(static_cast<std::size_t>(staleness), kStalenessBuckets - 1);
    if (histogram.size() <= bucket) histogram.resize(bucket + 1, 0);
    ++histogram[bucket];
  }

  void record_loss(float loss) {
    loss_sum_ += loss;
    ++loss_count_;
  }

  // The mean batch loss since the previous call (0 when none came).
  double take_mean_loss() {
    const double mean = loss_count_ ? loss_sum_ / static_cast<double>(loss_count_) : 0.0;
    loss_sum_ = 0.0;
    loss_count_ = 0;
    return mean;
  }

 private:
  std::uint64_t staleness_count_ = 0;
  double staleness_sum_ = 0.0;
  double loss_sum_ = 0.0;
  std::uint64_t loss_count_ = 0;
};

}  // namespace psgrad
