#include "apps/job_from_config.hpp"

namespace psgrad {

TrainingJob job_from_config(const Config& config) {
  TrainingJob job;
  job.architecture = config.model.architecture;
  job.model_settings = config.model.settings;
  job.optimizer = config.optimizer.name;
  job.optimizer_settings = config.optimizer.settings;
  job.learn_rate_schedule = config.optimizer.schedule;
  job.learn_rate_schedule_settings = config.optimizer.schedule_settings;
  // The config was validated against the same spellings (io/config.cpp), so this always parses.
  job.mode = parse_training_mode(config.cluster.mode).value_or(TrainingMode::sync);
  job.staleness = static_cast<std::uint64_t>(config.cluster.staleness);
  job.backup_workers = static_cast<std::size_t>(config.cluster.backup_workers);
  job.servers = static_cast<std::size_t>(config.cluster.servers);
  job.wire = parse_wire_encoding(config.cluster.wire).value_or(WireEncoding::fp32);
  job.topk_fraction = config.cluster.topk_fraction;
  job.iterations = static_cast<std::uint64_t>(config.training.iterations);
  job.batch_size = static_cast<std::size_t>(config.training.batch_size);
  job.eval_batch_size = static_cast<std::size_t>(config.evaluation.batch_size);
  job.eval_frequency = static_cast<std::uint64_t>(config.evaluation.frequency);
  job.patience = static_cast<std::uint64_t>(config.training.patience);
  job.seed = config.training.seed;
  job.num_workers = static_cast<std::size_t>(config.cluster.num_workers);
  job.request_timeout = std::chrono::milliseconds(config.cluster.request_timeout_ms);
  job.checkpoint_every = static_cast<std::uint64_t>(config.training.checkpoint_every);
  job.elastic = config.cluster.elastic;
  job.pipeline = config.cluster.pipeline;
  job.ordered_answers = config.cluster.ordered_answers;
  job.shared_memory = config.cluster.shared_memory;
  job.rejoin_timeout = std::chrono::milliseconds(config.cluster.rejoin_timeout_ms);
  job.worker_delays.assign(job.num_workers, std::chrono::milliseconds(config.cluster.worker_delay_ms));
  if (!job.worker_delays.empty())
    job.worker_delays.back() += std::chrono::milliseconds(config.cluster.straggler_delay_ms);
  return job;
}

NetworkSettings network_from_config(const Config& config) {
  return NetworkSettings{std::chrono::milliseconds(config.cluster.heartbeat_ms),
                         std::chrono::milliseconds(config.cluster.connection_timeout_ms),
                         TlsSettings{config.cluster.tls_certificate, config.cluster.tls_key, config.cluster.tls_ca}};
}

}  // namespace psgrad
