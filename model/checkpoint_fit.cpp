#include "model/checkpoint_fit.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "model/finite.hpp"
#include "model/run_limits.hpp"

namespace psgrad {

namespace {

// xoshiro's all-zero state is a fixed point: it yields 0 forever, so a shuffle would never end.
bool stuck_generator(const Random::State& state) {
  return std::all_of(state.begin(), state.end(), [](std::uint64_t word) { return word == 0; });
}

}  // namespace

std::optional<std::string> stream_misfit(const WorkerStreamState& stream, std::size_t train_examples) {
  const auto field = [&](const char* name) { return fmt::format("workers[{}].{}", stream.worker, name); };
  if (stream.data.cursor >= train_examples)
    return fmt::format("{}: {} is past the end of this run's {} training examples (was the checkpoint written "
                       "for other data?)",
                       field("cursor"), stream.data.cursor, train_examples);
  if (stream.data.epoch > max_run_steps)
    return fmt::format("{}: {} is more epochs than a run can have (at most {})", field("epoch"), stream.data.epoch,
                       max_run_steps);
  if (stuck_generator(stream.data.epoch_rng))
    return fmt::format("{}: the data-order generator's state is all zero, which no run writes", field("epoch_rng"));
  if (stuck_generator(stream.dropout))
    return fmt::format("{}: the dropout generator's state is all zero, which no run writes", field("dropout"));
  return std::nullopt;
}

std::optional<std::string> checkpoint_misfit(const TrainingCheckpoint& checkpoint, const ResumingRun& run) {
  if (checkpoint.iteration > run.total_steps)
    return fmt::format("iteration: {} is beyond this run's {}", checkpoint.iteration, run.total_steps);
  if (checkpoint.version > max_run_steps)
    return fmt::format("version: {} optimizer steps is more than a run can have (at most {})", checkpoint.version,
                       max_run_steps);
  if (const auto bad = first_non_finite(checkpoint.weights.data(), checkpoint.weights.size()))
    return fmt::format("weights: weight {} is {}", *bad, checkpoint.weights[*bad]);
  for (std::size_t a = 0; a < checkpoint.optimizer.counts.size(); ++a)
    if (checkpoint.optimizer.counts[a] > max_run_steps)
      return fmt::format("optimizer.counts[{}]: {} steps is more than a run can have (at most {})", a,
                         checkpoint.optimizer.counts[a], max_run_steps);
  if (!std::isfinite(checkpoint.wall_seconds) || checkpoint.wall_seconds < 0)
    return fmt::format("wall_seconds: {} is not a time trained", checkpoint.wall_seconds);
  std::set<std::uint32_t> seen;
  for (const auto& stream : checkpoint.workers) {
    if (!seen.insert(stream.worker).second)
      return fmt::format("workers[{}]: the worker's stream is stored twice", stream.worker);
    if (auto misfit = stream_misfit(stream, run.train_examples)) return misfit;
  }
  return std::nullopt;
}

}  // namespace psgrad
