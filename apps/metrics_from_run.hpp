// Turns a run's config, evaluation reports and summary into metrics-file records.
#pragma once

#include <chrono>
#include <string>

#include "payloads/messages.hpp"
#include "actors/training_job.hpp"
#include "io/metrics_records.hpp"

namespace psgrad {

// config_text: the resolved config as render_config() wrote it.
MetricsRun metrics_run(const std::string& command, const std::string& config_text, const TrainingJob& job,
                       const std::string& data_description, std::chrono::system_clock::time_point start);
MetricsEval metrics_eval(const EvaluationReport& report);
MetricsSummary metrics_summary(const TrainingSummary& summary);

}  // namespace psgrad
