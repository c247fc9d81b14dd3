#include "apps/sparse_serve.hpp"

#include <cstdio>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "apps/checkpointing.hpp"
#include "apps/run_hooks.hpp"
#include "apps/error_exit.hpp"
#include "apps/launched_role.hpp"
#include "apps/local_run.hpp"
#include "apps/local_table_shards.hpp"
#include "apps/local_workers.hpp"
#include "apps/port_file.hpp"
#include "apps/serve_ending.hpp"
#include "apps/serve_gate.hpp"
#include "apps/shutdown_deadline.hpp"
#include "apps/signal_watch.hpp"
#include "apps/sparse_run.hpp"
#include "model/run_features.hpp"
#include "model/sparse_data_fingerprint.hpp"
#include "model/table_optimizer.hpp"
#include "transport/sparse_remote_server.hpp"

namespace psgrad {

int run_sparse_serve(const ServeOptions& given) {
  const ErrorExit error{"psgrad serve"};
  ServeOptions options = given;
  if (options.launched) {
    auto token = take_launch_token(LaunchedAs::server);
    if (!token) return error.refused(token.error());
    options.token = *token;
  }
  SignalWatch signals;  // before the actor system, whose threads must not take the signals
  if (options.remote_shards)
    if (auto offered = check_run_feature("serve --remote-shards", true); !offered)
      return error.refused(offered.error());
  TrainOptions train;
  static_cast<RunOptions&>(train) = options;
  train.processes = true;  // the run is across processes: what only one process offers is refused
  train.resume = options.resume;
  if (train.resume_command.empty()) train.resume_command = resume_command(options, "psgrad serve");
  if (!options.bind.empty()) train.flags.push_back({"--bind", "cluster.host", SettingValue{options.bind}});
  if (options.port >= 0) train.flags.push_back({"--port", "cluster.port", SettingValue{std::int64_t{options.port}}});
  if (options.spawn_local_workers)
    train.flags.push_back({"--processes", "cluster.host", SettingValue{std::string("127.0.0.1")}});
  // The tables are held by the shard processes: none of their rows lives here, but with --processes every
  // shard process runs on this machine.
  auto prepared = prepare_sparse_run(train, options.spawn_local_workers);
  if (!prepared) return ErrorExit{"psgrad"}.refused(prepared.error());
  auto& sparse = *prepared;
  auto& run = sparse.run;
  print_run_header(run);
  std::optional<PortFile> port_file;
  if (!options.port_file.empty()) {
    auto created = PortFile::create(options.port_file);
    if (!created) return error.refused("--port-file: " + created.error());
    port_file.emplace(std::move(*created));
  }
  auto actor_config = run_actor_config(run);
  ShutdownDeadline deadline(std::chrono::seconds(10));
  caf::actor_system system{actor_config};
  SparseServeSetup setup;
  setup.job = run.job();
  setup.config = run.config_text;
  setup.dev = sparse.data.dev;
  setup.tables = table_optimizer_choice(run.config.tables);
  if (auto gate = set_serve_gate(setup, run.config, options.token, options.spawn_local_workers); !gate)
    return error.failed(gate.error());
  setup.on_event = run.output->event_printer("psgrad serve");
  setup.on_report = run.output->callback();
  setup.interrupt = signals.flag();
  if (run.best) setup.stop_early = run.best->stop_flag();
  setup.on_snapshot = snapshot_callback(run);
  setup.collect_tables = !options.save_model.empty();
  setup.train_data = fingerprint_of(*sparse.data.train, sparse.data.train->origin);
  setup.on_checkpoint = checkpoint_writer(run, signals.flag(), sparse.table_floats);
  setup.checkpoints_on_signal_only = checkpoints_on_signal_only(run);
  if (sparse.resume) setup.resume = std::make_shared<const TrainingCheckpoint>(std::move(*sparse.resume));
  std::vector<ChildProcess> children;
  setup.on_listening = [&](std::uint16_t port) {
    write_port_file_or_stop(port_file, {setup.host, port}, "psgrad serve");
    fmt::print(stderr, "psgrad serve: listening on {}:{}, waiting for {} workers and {} table shards\n", setup.host,
               port, setup.job.cluster.num_workers, setup.job.cluster.servers);
    std::fflush(stderr);
    if (options.spawn_local_workers) {
      children = start_local_table_shards(setup.job.cluster.servers, port, setup.token);
      auto workers = start_local_workers(setup.job.cluster.num_workers, port, options.data_dir, setup.token);
      for (auto& worker : workers) children.push_back(std::move(worker));
    }
  };
  signals.training_started();
  const auto outcome = serve_sparse_training(system, setup);
  if (outcome && setup.collect_tables) {
    std::size_t rows = 0;
    for (const auto& table : outcome->tables) rows += table.keys.size();
    fmt::print(stderr, "psgrad serve: the {} table shards held {} rows\n", setup.job.cluster.servers, rows);
  }
  const int run_code = finish_sparse_run(outcome, sparse, train);
  if (!outcome) stop_local_workers(children);
  if (outcome) wait_for_local_workers(children);
  const int code = serve_exit_code(run_code, signals.flag()->load());
  deadline.arm(code);
  return code;
}

}  // namespace psgrad
