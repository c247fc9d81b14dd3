#include "bench/sparse_jobs.hpp"

#include <vector>

#include "io/click_log_generator.hpp"

namespace psgrad::bench {

namespace {

TrainingJob sparse_job(std::size_t fields, std::size_t width, std::uint64_t rows, const char* pooling) {
  TrainingJob job;
  job.model.architecture = "hashembed_mlp.v1";
  job.model.settings = {
      {"embedding_widths", std::vector<std::int64_t>(fields, static_cast<std::int64_t>(width))},
      {"embedding_rows", std::vector<std::int64_t>(fields, static_cast<std::int64_t>(rows))},
      {"pooling", std::string(pooling)},
      {"hidden_width", std::int64_t{128}},
      {"dropout", 0.2}};
  job.cluster.num_workers = 2;
  job.cluster.servers = 1;
  job.training.batch_size = 128;
  job.training.seed = 0;
  job.evaluation.batch_size = 1024;
  job.evaluation.frequency = std::uint64_t{1} << 40;  // only the final evaluation, outside training_seconds
  job.optimizer.settings = {{"learn_rate", 0.001}};  // Adam.v1, its other settings at their defaults
  return job;
}

}  // namespace

TrainingJob click_job(std::size_t width, std::uint64_t rows) {
  return sparse_job(kClickCategoricalFields, width, rows, "sum");
}

TrainingJob debian_packages_job() {
  auto job = sparse_job(4, 32, std::uint64_t{1} << 16, "mean");
  job.cluster.mode = TrainingMode::async;
  job.cluster.servers = 2;
  job.optimizer.settings = {{"learn_rate", 0.003}};
  return job;
}

}  // namespace psgrad::bench
