// The TOML training configuration: sections, validation against registered settings, overrides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/result.hpp"
#include "model/run_limits.hpp"
#include "model/settings.hpp"

namespace psgrad {

// The fixed sections. A member's initial value is that key's default; the section tables in config.cpp
// give each key its name, check and description once, and validation, rendering and the reference
// follow from them.
struct TrainingSection {
  std::int64_t iterations = 200;
  std::int64_t batch_size = 128;
  std::uint64_t seed = 0;
  std::int64_t checkpoint_every = 0;  // 0: only at the end, when checkpoint_path is set
  std::string checkpoint_path;        // empty: no checkpoints
  std::int64_t patience = 0;          // evaluations without a better dev accuracy before stopping; 0: never
  bool save_best = false;             // keep the best evaluated weights instead of the last
};

struct EvaluationSection {
  std::int64_t batch_size = 256;
  std::int64_t frequency = 10;
};

struct ModelSection {
  std::string architecture = "relu_relu_softmax.v1";  // "@layers"
  Settings settings;                                   // every setting, defaults filled in
};

struct OptimizerSection {
  std::string name = "Adam.v1";  // "@optimizers"
  Settings settings;  // with a schedule, learn_rate holds the schedule's first value (as Thinc's does)
  // [optimizer.learn_rate] "@schedules": a registered schedule for the learning rate; empty: none.
  std::string schedule;
  Settings schedule_settings;
};

struct DataSection {
  std::string name = "mnist";  // a named data set ...
  std::string path;            // ... or a folder of IDX or .npy files, an .npz or a CSV file (wins when set)
  std::int64_t label_column = 0;  // CSV: the label's column, from 0; negative counts from the end
  std::string dev_path;           // the dev examples, replacing any test split of path
  double dev_fraction = 0.0;      // or this share of path's examples, per class; 0: none
  double scale = 1.0;             // CSV and NumPy features are multiplied by it
};

struct ClusterSection {
  std::int64_t num_workers = 2;
  std::int64_t threads = 0;  // CAF scheduler threads; 0: the machine's cores
  std::string mode = "sync";  // "sync", "async" or "ssp"
  std::int64_t staleness = 2;  // ssp's bound
  std::int64_t backup_workers = 0;  // sync: each step uses the first num_workers - backup_workers gradients
  std::int64_t servers = 1;    // parameter-server shards
  std::string wire = "fp32";   // "fp32", "bf16" or "topk"
  double topk_fraction = 0.04; // wire topk: share of each array's entries a gradient sends
  std::string host = "127.0.0.1";
  std::int64_t port = 0;  // 0: pick a free port
  std::int64_t heartbeat_ms = 200;
  std::int64_t connection_timeout_ms = 1000;
  std::int64_t request_timeout_ms = 30000;
  bool elastic = false;
  bool pipeline = false;
  bool ordered_answers = false;
  bool shared_memory = true;  // payloads between processes on one host through shared memory
  std::int64_t rejoin_timeout_ms = 30000;
  std::int64_t join_timeout_ms = 600000;  // 0: wait for the workers forever
  std::string join_token;
  std::int64_t worker_delay_ms = 0;
  std::int64_t straggler_delay_ms = 0;
  std::string tls_certificate;  // PEM files; any set switches the server to TLS
  std::string tls_key;
  std::string tls_ca;
};

struct Config {
  std::string source;  // file name, for messages
  // What parsing changed on its own, for the user to see: settings of an architecture or optimizer
  // that --set replaced, dropped because the new choice has no such setting.
  std::vector<std::string> notes;
  TrainingSection training;
  EvaluationSection evaluation;
  ModelSection model;
  OptimizerSection optimizer;
  DataSection data;
  ClusterSection cluster;
};

// Parses and validates TOML text. overrides are "section.key=value" (value in TOML syntax; a bare word
// is taken as a string) and are applied before validation, so they get the same checks. Every error is
// one line: "<source>: <key path>: expected ..., got ...".
Result<Config> parse_config(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides = {});
Result<Config> load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// The resolved config as TOML, every default filled in; parse_config(render_config(c)) gives c back.
std::string render_config(const Config& config);

// The settings each fixed section accepts (for validation and the generated config reference).
const std::vector<SettingSpec>& training_settings();
const std::vector<SettingSpec>& evaluation_settings();
const std::vector<SettingSpec>& data_settings();
const std::vector<SettingSpec>& cluster_settings();

}  // namespace psgrad
