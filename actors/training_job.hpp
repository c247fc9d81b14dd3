// What one training run needs to know, independent of where its settings came from.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/training_mode.hpp"
#include "model/wire_encoding.hpp"
#include "model/model.hpp"
#include "model/optimizer.hpp"
#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

// ssp: asynchronous, but no worker gets more than `staleness` gradients ahead of the slowest one.

struct TrainingJob {
  std::string architecture = "relu_relu_softmax.v1";
  Settings model_settings;
  std::string optimizer = "Adam.v1";
  Settings optimizer_settings;
  // A registered schedule ("warmup_linear.v1") for the learning rate; empty: learn_rate is fixed.
  std::string learn_rate_schedule;
  Settings learn_rate_schedule_settings;
  TrainingMode mode = TrainingMode::sync;
  std::uint64_t iterations = 200;
  std::size_t batch_size = 128;
  std::size_t eval_batch_size = 256;
  std::uint64_t eval_frequency = 10;
  // Early stopping is decided from the evaluations: with patience, a sync run waits for each one before
  // its next step, so where it stops does not depend on timing.
  std::uint64_t patience = 0;
  std::uint64_t seed = 0;
  std::size_t num_workers = 2;
  std::chrono::milliseconds request_timeout{30000};
  std::size_t servers = 1;       // parameter-server shards
  WireEncoding wire = WireEncoding::fp32;  // how weights and gradients travel
  double topk_fraction = 0.04;             // wire topk: share of each array's entries a gradient sends
  std::uint64_t staleness = 2;  // ssp's bound on how far a worker's clock may lead the slowest
  // sync: each step uses the first (live workers - backup_workers) gradients to arrive, at least one,
  // and drops the others (backup workers, as in Chen et al., "Revisiting Distributed Synchronous SGD").
  std::size_t backup_workers = 0;
  std::uint64_t checkpoint_every = 0;  // 0: only at the end (when checkpoints are taken at all)
  bool elastic = false;                // workers may join while training runs
  bool pipeline = false;               // a worker computes its next gradient while one is out (sync too)
  bool ordered_answers = false;        // sync: a step's answers to remote workers go one after another
  bool shared_memory = true;           // processes on one host pass payloads through shared memory
  std::chrono::milliseconds rejoin_timeout{30000};
  // Extra time per gradient for worker k (missing entries: none), to study slow machines.
  std::vector<std::chrono::milliseconds> worker_delays;
};


// The model every participant builds: the server's is initialized from the run's seed.
Result<Model> build_model(const TrainingJob& job, std::size_t input_width, std::size_t output_width);
Result<Model> build_initialized_model(const TrainingJob& job, std::size_t input_width,
                                      std::size_t output_width);
Result<std::unique_ptr<Optimizer>> build_optimizer(const TrainingJob& job, const ParameterLayout& layout);

std::chrono::milliseconds worker_delay(const TrainingJob& job, std::size_t worker);

// Worker k's data order and dropout masks come from their own streams of seed + k.
std::uint64_t worker_data_seed(std::uint64_t seed, std::size_t worker);
std::uint64_t worker_dropout_seed(std::uint64_t seed, std::size_t worker);

}  // namespace psgrad
