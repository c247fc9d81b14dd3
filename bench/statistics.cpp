// Median and spread of repeated timings.
#include "bench/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace psgrad::bench {

Stats summarize(std::vector<double> samples) {
  Stats stats;
  if (samples.empty()) return stats;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  stats.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.samples = std::move(samples);
  return stats;
}

Stats exact(double value) { return summarize({value}); }

Stats scaled(const Stats& stats, double factor) {
  std::vector<double> samples;
  for (double s : stats.samples) samples.push_back(s * factor);
  return summarize(samples);
}

Stats ratio(const Stats& numerator, const Stats& denominator) {
  Stats result;
  if (denominator.median == 0.0 || denominator.min == 0.0) return result;
  result.median = numerator.median / denominator.median;
  result.min = numerator.min / denominator.max;
  result.max = numerator.max / denominator.min;
  result.samples = {result.median};
  return result;
}

Stats paired_ratio(const Stats& numerator, const Stats& denominator) {
  if (numerator.samples.size() != denominator.samples.size() || numerator.samples.empty())
    return ratio(numerator, denominator);
  std::vector<double> ratios;
  for (std::size_t i = 0; i < numerator.samples.size(); ++i) {
    if (denominator.samples[i] == 0.0) return Stats{};
    ratios.push_back(numerator.samples[i] / denominator.samples[i]);
  }
  return summarize(std::move(ratios));
}

Stats reciprocal(const Stats& stats) {
  std::vector<double> samples;
  for (double s : stats.samples) samples.push_back(s > 0.0 ? 1.0 / s : 0.0);
  return summarize(samples);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Stats time_per_call(std::size_t repeats, std::size_t calls_per_sample, const std::function<void()>& call) {
  std::vector<double> samples;
  for (std::size_t r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    for (std::size_t i = 0; i < calls_per_sample; ++i) call();
    samples.push_back(seconds_since(start) / static_cast<double>(calls_per_sample));
  }
  return summarize(samples);
}

std::size_t calls_for(double target_seconds, const std::function<void()>& call, std::size_t minimum) {
  // Probe until at least 50 ms have passed, so the estimate is not one cold call.
  std::size_t calls = 0;
  const auto start = Clock::now();
  double elapsed = 0.0;
  while (elapsed < 0.05) {
    call();
    ++calls;
    elapsed = seconds_since(start);
  }
  const auto estimate = static_cast<std::size_t>(std::ceil(target_seconds * calls / elapsed));
  return std::max(minimum, estimate);
}

}  // namespace psgrad::bench
