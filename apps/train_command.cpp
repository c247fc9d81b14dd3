#include "apps/train_command.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "actors/local_training.hpp"
#include "apps/job_from_config.hpp"
#include "apps/report_printer.hpp"
#include "apps/weights_file.hpp"
#include "io/config.hpp"
#include "io/dataset.hpp"

namespace psgrad {

// --mode and --workers are shorthands for overrides, so they get the config's checks.
std::vector<std::string> effective_overrides(const std::vector<std::string>& overrides,
                                             const std::string& mode, int workers) {
  auto all = overrides;
  if (!mode.empty()) all.push_back("cluster.mode=" + mode);
  if (workers != 0) all.push_back("cluster.num_workers=" + std::to_string(workers));
  return all;
}

int run_train_command(const TrainOptions& options) {
  auto config = load_config(options.config_path,
                            effective_overrides(options.overrides, options.mode, options.workers));
  if (!config) {
    fmt::print(stderr, "psgrad: {}\n", config.error());
    return 2;
  }
  const auto data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  auto data = load_data_shared(config->data.name, config->data.path, data_dir);
  if (!data) {
    fmt::print(stderr, "psgrad: {}\n", data.error());
    return 2;
  }
  const auto job = job_from_config(*config);
  fmt::print("Running {} parameter server training: {} workers, {} iterations, data {}\n",
             mode_name(job.mode) == "sync" ? "synchronous" : "asynchronous", job.num_workers,
             job.iterations, data->description);
  std::fflush(stdout);
  ActorConfig actor_config(static_cast<std::size_t>(config->cluster.threads), network_from_config(*config));
  caf::actor_system system{actor_config};
  auto summary = train_in_process(system, job, data->train, data->dev, print_reports());
  if (!summary) {
    fmt::print(stderr, "psgrad: training failed: {}\n", summary.error());
    return 1;
  }
  fmt::print("{}\n", summary_line(*summary, job.num_workers));
  if (!options.save_weights.empty()) {
    auto saved = write_weights_file(options.save_weights, summary->final_weights);
    if (!saved) {
      fmt::print(stderr, "psgrad: {}\n", saved.error());
      return 1;
    }
  }
  return 0;
}

}  // namespace psgrad
