// The evaluator reports in snapshot order, so the first report at or above the target is the
// earliest snapshot that reached it; its progress.wall_seconds is when that snapshot was taken.
#include "bench/time_to_accuracy.hpp"

#include <mutex>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/local_runs.hpp"

namespace psgrad::bench {

AccuracyRun run_to_accuracy(const TrainingJob& job, const DataSplit& data) {
  std::mutex mutex;
  AccuracyRun run;
  auto on_report = [&](const EvaluationReport& evaluation) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!run.hit && evaluation.accuracy >= kTargetAccuracy)
      run.hit = AccuracyHit{evaluation.progress.wall_seconds, evaluation.iteration, evaluation.progress.samples};
  };
  auto summary = run_in_process(job, data, on_report);
  if (!summary) throw std::runtime_error("time-to-accuracy run failed: " + summary.error());
  std::lock_guard<std::mutex> lock(mutex);
  run.final_accuracy = summary->final_accuracy;
  return run;
}

void measure_time_to_accuracy(BenchContext& context, Report& report) {
  const char* section = "6 accuracy";
  auto& details = report.details("time_to_accuracy");
  for (auto mode : {TrainingMode::sync, TrainingMode::async}) {
    TrainingJob job = context.job;
    job.cluster.mode = mode;
    job.cluster.num_workers = 2;
    job.evaluation.frequency = 10;
    job.training.iterations = context.effort.accuracy_iterations;
    const auto name = mode_name(mode);
    std::vector<double> seconds, samples;
    std::uint64_t iteration = 0;
    double final_accuracy = 0.0;
    for (std::size_t r = 0; r < context.effort.repeats; ++r) {
      const auto run = run_to_accuracy(job, context.data);
      final_accuracy = run.final_accuracy;
      if (!run.hit) continue;
      seconds.push_back(run.hit->wall_seconds);
      samples.push_back(static_cast<double>(run.hit->samples));
      iteration = run.hit->iteration;
    }
    details[name] = {{"iterations_run", job.training.iterations},
                     {"runs", context.effort.repeats},
                     {"runs_reaching_target", seconds.size()},
                     {"final_accuracy", final_accuracy}};
    if (seconds.empty()) {
      report.add({fmt::format("accuracy.{}.seconds_to_085", name), section,
                  fmt::format("{} 2 workers: seconds to {:.2f} dev accuracy", name, kTargetAccuracy), Stats{}, "s",
                  fmt::format("NOT REACHED in {} iterations (final {:.3f})", job.training.iterations, final_accuracy)});
      continue;
    }
    report.add({fmt::format("accuracy.{}.seconds_to_085", name), section,
                fmt::format("{} 2 workers: seconds to {:.2f} dev accuracy", name, kTargetAccuracy),
                summarize(seconds), "s",
                fmt::format("at {} {}, eval every 10", mode == TrainingMode::sync ? "iteration" : "step", iteration)});
    report.add({fmt::format("accuracy.{}.samples_to_085", name), section, "  training samples until then",
                summarize(samples), "samples", ""});
  }
}

}  // namespace psgrad::bench
