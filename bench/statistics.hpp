// Repeated measurements reduced to median and spread (min–max), and ratios that carry the spread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

namespace psgrad::bench {

struct Stats {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  std::vector<double> samples;
};

Stats summarize(std::vector<double> samples);
// A single figure (a count, a byte size): no spread.
Stats exact(double value);
Stats scaled(const Stats& stats, double factor);
// numerator / denominator: median over median, spread from the extreme pairings (worst to best case).
Stats ratio(const Stats& numerator, const Stats& denominator);
// numerator.samples[i] / denominator.samples[i], for series measured in pairs (each numerator run
// right beside its denominator run), so that a change in the machine's load between pairs cancels:
// the median of those ratios, spread over the pairs. Falls back to ratio() when the samples do not pair.
Stats paired_ratio(const Stats& numerator, const Stats& denominator);
// The reciprocal of each sample (seconds per call -> calls per second).
Stats reciprocal(const Stats& stats);

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start);

// Seconds per call of `call`: `repeats` samples, each the mean over `calls_per_sample` calls.
Stats time_per_call(std::size_t repeats, std::size_t calls_per_sample, const std::function<void()>& call);

// How many calls fill `target_seconds`, estimated from a short probe run of `call`.
std::size_t calls_for(double target_seconds, const std::function<void()>& call, std::size_t minimum = 1);

}  // namespace psgrad::bench
