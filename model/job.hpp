// What one training run is told: the config's sections that shape training, each key declared once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/layer_spec.hpp"
#include "model/settings.hpp"
#include "model/training_mode.hpp"
#include "model/wire_encoding.hpp"

namespace psgrad {

// A member's initial value is its key's default. io/config_keys.cpp gives each key its name, check and
// description; parsing writes straight into these members, and the actors read them, so nothing copies
// them field by field.
struct ModelSection {
  std::string architecture = "relu_relu_softmax.v1";  // "@layers"
  Settings settings;                                   // every setting, defaults filled in
  // Set when "@layers" names one of Thinc's layers ("chain.v1") rather than a registered architecture:
  // the model as that graph of layers; architecture is then its top layer's name.
  LayerSpec graph;
};

struct OptimizerSection {
  std::string name = "Adam.v1";  // "@optimizers"
  Settings settings;  // with a schedule, learn_rate holds the schedule's first value (as Thinc's does)
  // [optimizer.learn_rate] "@schedules": a registered schedule for the learning rate; empty: none.
  std::string schedule;
  Settings schedule_settings;
  // constant_then.v1's following schedule, [optimizer.learn_rate.schedule] "@schedules" (nested once, as
  // Thinc configs write it); empty otherwise.
  std::string then_schedule;
  Settings then_settings;
  // learn_rate = [a, b, c] (Thinc's list): step n takes value n, the last one ever after; empty: none.
  std::vector<double> learn_rates;
  bool has_schedule() const { return !schedule.empty() || !learn_rates.empty(); }
};

// [tables]: how embedding tables' rows step (models with tables only). Lazy Adam follows [optimizer]'s
// Adam.v1 settings; the other keys are Adagrad's.
struct TablesSection {
  std::string optimizer = "lazy_adam";  // or "adagrad"
  double learn_rate = 0.01;
  double initial_accumulator = 0.1;
  double eps = 1e-7;
  double grad_clip = 0.0;  // the table's gradient norm; 0 disables
};

struct TrainingSection {
  std::uint64_t iterations = 200;
  std::size_t batch_size = 128;
  std::uint64_t seed = 0;
  std::uint64_t checkpoint_every = 0;  // 0: only at the end, when checkpoint_path is set
  std::string checkpoint_path;         // empty: no checkpoints
  // Evaluations without a better dev accuracy before stopping; 0: never. With patience, a sync run waits
  // for each evaluation before its next step, so where it stops does not depend on timing.
  std::uint64_t patience = 0;
  bool save_best = false;  // keep the best evaluated weights instead of the last
  // Evaluate, keep and save the optimizer's weight averages instead of the weights, as spaCy evaluates
  // and saves with Thinc's `model.use_params(optimizer.averages)`. Training itself steps the weights.
  bool with_averages = false;
};

struct EvaluationSection {
  std::size_t batch_size = 256;
  std::uint64_t frequency = 10;
};

struct ClusterSection {
  std::size_t num_workers = 2;
  std::size_t threads = 0;  // CAF scheduler threads; 0: the machine's cores
  TrainingMode mode = TrainingMode::sync;
  std::uint64_t staleness = 2;  // ssp: no worker gets more than this many gradients ahead of the slowest
  // sync: each step uses the first (live workers - backup_workers) gradients to arrive, at least one,
  // and drops the others (backup workers, as in Chen et al., "Revisiting Distributed Synchronous SGD").
  std::size_t backup_workers = 0;
  std::size_t servers = 1;                 // parameter-server shards
  WireEncoding wire = WireEncoding::fp32;  // how weights and gradients travel
  double topk_fraction = 0.04;             // wire topk: share of each array's entries a gradient sends
  std::string host = "127.0.0.1";
  std::int64_t port = 0;  // 0: pick a free port
  std::chrono::milliseconds heartbeat{200};
  std::chrono::milliseconds connection_timeout{1000};
  // How long a worker waits for a server that answers nothing (stopped, stalled) before giving up; 0: forever.
  std::chrono::milliseconds server_wait{60000};
  std::chrono::milliseconds request_timeout{30000};
  bool elastic = false;           // workers may join while training runs
  bool pipeline = false;          // a worker computes its next gradient while one is out (sync too)
  bool ordered_answers = false;   // sync: a step's answers to remote workers go one after another
  bool shared_memory = true;      // processes on one host pass payloads through shared memory
  std::chrono::milliseconds rejoin_timeout{30000};
  std::chrono::milliseconds join_timeout{600000};  // 0: wait for the workers forever
  std::string join_token;
  // Extra time per gradient for every worker, and on top of it for the last one, to study slow machines.
  std::chrono::milliseconds worker_delay{0};
  std::chrono::milliseconds straggler_delay{0};
  std::string tls_certificate;  // PEM files; any set switches the server to TLS
  std::string tls_key;
  std::string tls_ca;
};

struct TrainingJob {
  TrainingSection training;
  EvaluationSection evaluation;
  ModelSection model;
  OptimizerSection optimizer;
  TablesSection tables;
  ClusterSection cluster;
};

// Worker k's extra time per gradient: cluster.worker_delay, and the straggler's on top for the last.
inline std::chrono::milliseconds worker_delay(const TrainingJob& job, std::size_t worker) {
  const bool straggler = job.cluster.num_workers > 0 && worker == job.cluster.num_workers - 1;
  return job.cluster.worker_delay + (straggler ? job.cluster.straggler_delay : std::chrono::milliseconds{0});
}

}  // namespace psgrad
