// Field-by-field copies from the actors' messages into the metrics records.
#include "apps/metrics_from_run.hpp"

#include "apps/weights_file.hpp"
#include "model/fnv1a.hpp"
#include "io/metrics_writer.hpp"

namespace psgrad {

namespace {

MetricsWorkers metrics_workers(const WorkerStatistics& statistics) {
  return MetricsWorkers{statistics.dropped, statistics.compute_ms_mean, statistics.wait_ms_mean,
                        statistics.staleness_histogram};
}

}  // namespace

MetricsRun metrics_run(const std::string& command, const std::string& config_text, const TrainingJob& job,
                       const std::string& data_description, std::chrono::system_clock::time_point start) {
  MetricsRun run;
  run.command = command;
  run.mode = mode_name(job.cluster.mode);
  run.num_workers = job.cluster.num_workers;
  run.iterations = job.training.iterations;
  run.config = config_text;
  run.config_hash = hash_hex(fnv1a(run.config));
  run.data = data_description;
  run.start_time = utc_iso8601(start);
  return run;
}

MetricsEval metrics_eval(const EvaluationReport& report) {
  MetricsEval eval;
  eval.iteration = report.iteration;
  eval.version = report.version;
  eval.wall_seconds = report.progress.wall_seconds;
  eval.samples = report.progress.samples;
  eval.dev_accuracy = report.accuracy;
  eval.dev_loss = report.loss;
  eval.train_loss = report.progress.train_loss;
  eval.staleness_mean = report.progress.staleness_mean;
  eval.staleness_max = report.progress.staleness_max;
  eval.gradients_per_worker = report.progress.gradients_per_worker;
  eval.final = report.final;
  eval.workers = metrics_workers(report.progress.workers);
  return eval;
}

MetricsSummary metrics_summary(const TrainingSummary& summary) {
  MetricsSummary out;
  out.mode = mode_name(summary.mode);
  out.steps = summary.steps;
  out.samples = summary.samples;
  out.final_accuracy = summary.final_accuracy;
  out.wall_seconds = summary.wall_seconds;
  out.training_seconds = summary.training_seconds;
  // The same rate the summary line prints: training time only, without the final evaluation.
  out.samples_per_second =
      summary.training_seconds > 0 ? static_cast<double>(summary.samples) / summary.training_seconds : 0.0;
  out.staleness_min = summary.staleness_min;
  out.staleness_mean = summary.staleness_mean;
  out.staleness_max = summary.staleness_max;
  out.gradients_per_worker = summary.gradients_per_worker;
  out.final_version = summary.final_weights.version;
  out.weights_hash = hash_hex(weights_hash(summary.final_weights.values));
  out.workers = metrics_workers(summary.workers);
  return out;
}

}  // namespace psgrad
