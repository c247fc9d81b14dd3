// Serves a run to worker (and shard) processes, or to worker children it starts itself.
#include "apps/serve_command.hpp"
#include "apps/shutdown_deadline.hpp"

#include <cstdio>
#include <random>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "apps/signal_watch.hpp"
#include "transport/remote_server.hpp"
#include "payloads/shared_memory.hpp"
#include "apps/checkpointing.hpp"
#include "apps/connect_options.hpp"
#include "apps/job_from_config.hpp"
#include "apps/launched_role.hpp"
#include "apps/local_workers.hpp"
#include "apps/run_options.hpp"

namespace psgrad {

namespace {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// 128 random bits in hex, from the system's random device.
std::string random_token() {
  std::random_device device;
  std::string token;
  for (int k = 0; k < 4; ++k) token += fmt::format("{:08x}", device());
  return token;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  auto* command = app.add_subcommand("serve", "Serve a run: parameter server, driver and evaluator; "
                                              "workers join with `psgrad work`");
  add_run_options(*command, *options);
  command->add_option("--bind", options->bind, "address to listen on (default cluster.host, 127.0.0.1)");
  command->add_option("--port", options->port, "port to listen on; 0 picks a free one (default cluster.port)")
      ->check(CLI::Range(0, 65535));
  command->add_option("--token", options->token,
                      fmt::format("join token workers must present (default ${}, then cluster.join_token)",
                                  join_token_variable))
      ->envname(join_token_variable);
  command->add_option("--resume", options->resume, "continue from this checkpoint file");
  command->add_flag("--remote-shards", options->remote_shards,
                    "with cluster.servers = K: expect shards 1..K-1 from `psgrad shard --index i` processes");
  command->add_flag("--launched", options->launched,
                    "started by `psgrad launch`: read the join token from the first line of standard input, "
                    "and stop (saving the run) when standard input closes");
  return {command, [options] { return run_serve_command(*options); }};
}

int run_serve_command(const ServeOptions& given) {
  ServeOptions options = given;
  if (options.launched) {
    auto token = take_launch_token(LaunchedAs::server);
    if (!token) {
      fmt::print(stderr, "psgrad serve: {}\n", token.error());
      return 2;
    }
    options.token = *token;
  }
  RunOptions run_options = options;
  if (!options.bind.empty()) run_options.overrides.push_back("cluster.host=\"" + options.bind + "\"");
  if (options.port >= 0) run_options.overrides.push_back("cluster.port=" + std::to_string(options.port));
  if (options.spawn_local_workers) {
    run_options.worker_processes_here = true;
    run_options.overrides.push_back("cluster.host=\"127.0.0.1\"");
    run_options.overrides.push_back("cluster.port=0");
  }
  SignalWatch signals;
  auto run = prepare_run(run_options);
  if (!run) {
    fmt::print(stderr, "psgrad: {}\n", run.error());
    return 2;
  }
  print_run_header(*run);
  ActorConfig actor_config(static_cast<std::size_t>(run->config.cluster.threads),
                           network_from_config(run->config));
  actor_config.help_server_steps_from_a_thread();
  ShutdownDeadline deadline(std::chrono::seconds(10));
  caf::actor_system system{actor_config};

  std::vector<ChildProcess> workers;
  ServeSetup setup;
  setup.job = run->job;
  setup.config = run->config_text;
  setup.dev = run->data.dev;
  setup.train_data = run->data.train_fingerprint;
  setup.host = run->config.cluster.host;
  setup.port = static_cast<std::uint16_t>(run->config.cluster.port);
  setup.tls = run->config.cluster.tls_ca.size() + run->config.cluster.tls_certificate.size() > 0;
  setup.token = options.token.empty() ? run->config.cluster.join_token : options.token;
  // Worker processes of our own get a token nobody else knows, so nothing else on this machine can
  // pass the gate of a `train --processes` run.
  if (options.spawn_local_workers && setup.token.empty()) setup.token = random_token();
  setup.join_timeout = std::chrono::milliseconds(run->config.cluster.join_timeout_ms);
  auto resume = load_resume(options.resume, *run);
  if (!resume) {
    fmt::print(stderr, "psgrad: {}\n", resume.error());
    return 2;
  }
  setup.resume = *resume;
  setup.remote_shards = options.remote_shards;
  setup.on_checkpoint = checkpoint_writer(*run, signals.flag());
  setup.interrupt = signals.flag();
  setup.trace = run->trace;
  if (run->best) {
    setup.stop_early = run->best->stop_flag();
    setup.on_snapshot = run->best->callback();
  }
  signals.training_started();
  setup.on_report = run->output->callback();
  setup.on_event = run->output->event_printer("psgrad serve");
  setup.on_listening = [&](std::uint16_t port) {
    fmt::print(stderr, "psgrad serve: listening on {}:{}, waiting for {} workers\n", setup.host, port,
               run->job.num_workers);
    if (!is_loopback(setup.host) && !setup.tls && setup.token.empty())
      fmt::print(stderr, "psgrad serve: warning: without a join token any psgrad process that reaches {} may "
                         "join, and plain connections are unencrypted; set --token, or use TLS\n", setup.host);
    else if (!is_loopback(setup.host) && !setup.tls)
      fmt::print(stderr, "psgrad serve: warning: plain connections on {} are checked against the join token "
                         "but unencrypted; use TLS on networks you do not trust\n", setup.host);
    std::fflush(stderr);
    if (options.spawn_local_workers)
      workers = start_local_workers(run->job.num_workers, port, options.data_dir, setup.token);
  };
  const auto summary = serve_training(system, setup);
  int code = finish_run(summary, *run, options);
  if (const auto note = shared_memory_note(); !note.empty()) fmt::print(stderr, "psgrad serve: {}\n", note);
  // Stopped by a signal before or while training: the shell sees which one.
  if (code != 0 && signals.flag()->load() != 0) code = exit_code_for_signal(signals.flag()->load());
  const int worker_failures = wait_for_local_workers(workers);
  code = code != 0 ? code : (worker_failures ? 1 : 0);
  deadline.arm(code);
  return code;
}

}  // namespace psgrad
