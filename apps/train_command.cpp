// Trains every model in this process, or hands `--processes` to serve with worker processes.
#include "apps/train_command.hpp"

#include <memory>

#include "caf/actor_system.hpp"
#include "apps/error_exit.hpp"
#include "apps/local_run.hpp"
#include "apps/run_options.hpp"
#include "apps/run_session.hpp"
#include "apps/serve_command.hpp"
#include "apps/tables_run.hpp"

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
    serve.resume_command = resume_command(options, "train --processes");
    return run_serve_command(serve);
  }
  RunSession session;
  auto with_hint = options;
  with_hint.resume_command = resume_command(options, "train");
  if (auto opened = session.open(with_hint, options.resume); !opened) return ErrorExit{"psgrad"}.refused(opened.error());
  auto& run = session.run();
  auto actor_config = local_actor_config(run);  // the system keeps a reference to it
  caf::actor_system system{actor_config};
  DriverHooks hooks;
  session.attach(hooks, "psgrad train");
  session.training_started();
  const auto outcome = train_locally(system, run, std::move(hooks), session.resume());
  if (!outcome) return session.finish(Error{outcome.error()});
  if (!run.tables) return session.finish(outcome->run);
  return session.finish(outcome->run, [&](const std::string& path, const Weights& weights) {
    return save_tables_model(path, run, *outcome, weights);
  });
}

}  // namespace psgrad
