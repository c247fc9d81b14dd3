// Trains in this process, or hands `--processes` to serve with worker processes.
#include "apps/train_command.hpp"

#include <memory>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "actors/local_training.hpp"
#include "apps/checkpointing.hpp"
#include "apps/job_from_config.hpp"
#include "apps/run_options.hpp"
#include "apps/serve_command.hpp"
#include "apps/signal_watch.hpp"

namespace psgrad {

Command add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  auto* command = app.add_subcommand("train", "Train: every actor in this process, or worker processes");
  add_run_options(*command, *options);
  command->add_flag("--processes", options->processes,
                    "run each worker as its own process on this machine, over loopback");
  command->add_option("--resume", options->resume, "continue from this checkpoint file");
  return {command, [options] { return run_train_command(*options); }};
}

int run_train_command(const TrainOptions& options) {
  if (options.processes) {
    ServeOptions serve;
    static_cast<RunOptions&>(serve) = options;
    serve.spawn_local_workers = true;
    serve.command = "train --processes";  // recorded in the metrics file, so plots can tell the runs apart
    serve.resume = options.resume;
    return run_serve_command(serve);
  }
  SignalWatch signals;
  auto run = prepare_run(options);
  if (!run) {
    fmt::print(stderr, "psgrad: {}\n", run.error());
    return 2;
  }
  print_run_header(*run);
  ActorConfig actor_config(static_cast<std::size_t>(run->config.cluster.threads),
                           network_from_config(run->config));
  prepare_local_run(actor_config, run->job.num_workers);
  caf::actor_system system{actor_config};
  auto resume = load_resume(options.resume, *run);
  if (!resume) {
    fmt::print(stderr, "psgrad: {}\n", resume.error());
    return 2;
  }
  DriverHooks hooks;
  hooks.on_event = run->output->event_printer("psgrad train");
  hooks.on_checkpoint = checkpoint_writer(*run, signals.flag());
  hooks.interrupt = signals.flag();
  hooks.trace = run->trace;
  if (run->best) hooks.stop_early = run->best->stop_flag();
  signals.training_started();
  const auto summary = train_in_process(system, run->job, run->data.train, run->data.dev, run->output->callback(),
                                        std::move(hooks), *resume,
                                        run->best ? run->best->callback() : SnapshotCallback{});
  return finish_run(summary, *run, options);
}

}  // namespace psgrad
