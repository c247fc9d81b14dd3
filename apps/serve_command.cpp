// Serves a run of any model to worker (and shard) processes, or to worker children it starts itself.
#include "apps/serve_command.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "caf/actor_system.hpp"
#include "apps/connect_options.hpp"
#include "apps/error_exit.hpp"
#include "apps/join_token.hpp"
#include "apps/launched_role.hpp"
#include "apps/local_workers.hpp"
#include "apps/port_file.hpp"
#include "apps/serve_ending.hpp"
#include "apps/run_options.hpp"
#include "apps/run_session.hpp"
#include "apps/shutdown_deadline.hpp"
#include "apps/local_table_shards.hpp"
#include "apps/tables_run.hpp"
#include "model/run_features.hpp"
#include "model/sparse_data_fingerprint.hpp"
#include "model/table_optimizer.hpp"
#include "payloads/shared_memory.hpp"
#include "transport/remote_server.hpp"

namespace psgrad {

namespace {

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// --bind, --port and train --processes stand for config keys, so they get the config's checks.
RunOptions run_options_of(const ServeOptions& options) {
  RunOptions run_options = options;
  if (!options.bind.empty()) run_options.flags.push_back({"--bind", "cluster.host", SettingValue{options.bind}});
  if (options.port >= 0) run_options.flags.push_back({"--port", "cluster.port", SettingValue{std::int64_t{options.port}}});
  // train --processes listens where only this machine's processes reach it, on cluster.port (0, the
  // default, picks a free one): a port the config or --set names is used, and refused if taken.
  if (options.spawn_local_workers) {
    run_options.worker_processes_here = true;
    run_options.flags.push_back({"--processes", "cluster.host", SettingValue{std::string("127.0.0.1")}});
  }
  return run_options;
}

// Address, TLS, join token and join timeout of the served run, from its config and serve's flags. Worker
// processes of our own (own_workers) get a token nobody else knows, so nothing else on this machine can
// pass the gate of a `train --processes` run.
Status set_serve_gate(ServeSetup& setup, const Config& config, const std::string& token_flag, bool own_workers) {
  setup.host = config.cluster.host;
  setup.port = static_cast<std::uint16_t>(config.cluster.port);
  setup.tls = config.cluster.tls_ca.size() + config.cluster.tls_certificate.size() > 0;
  setup.token = token_flag.empty() ? config.cluster.join_token : token_flag;
  if (own_workers && setup.token.empty()) {
    auto token = new_join_token();
    if (!token) return Error{token.error()};
    setup.token = *token;
  }
  setup.join_timeout = config.cluster.join_timeout;
  return success();
}

// The lines for people once the server listens, with a warning when strangers could join or listen in.
void say_listening(const ServeSetup& setup, std::uint16_t port) {
  const auto table_shards =
      setup.tables ? fmt::format(" and {} table shard{}", setup.job.cluster.servers, setup.job.cluster.servers == 1 ? "" : "s")
                   : std::string();
  fmt::print(stderr, "psgrad serve: listening on {}:{}, waiting for {} workers{}\n", setup.host, port,
             setup.job.cluster.num_workers, table_shards);
  if (!is_loopback(setup.host) && !setup.tls && setup.token.empty())
    fmt::print(stderr, "psgrad serve: warning: without a join token any psgrad process that reaches {} may "
                       "join, and plain connections are unencrypted; set --token, or use TLS\n", setup.host);
  else if (!is_loopback(setup.host) && !setup.tls)
    fmt::print(stderr, "psgrad serve: warning: plain connections on {} are checked against the join token "
                       "but unencrypted; use TLS on networks you do not trust\n", setup.host);
  std::fflush(stderr);
}

// The end of every served run: the processes it started are stopped (a failed run, or one stopped
// before training: they would only find the server gone) or waited for; then the exit code.
int end_serving(int run_code, bool trained, std::vector<ChildProcess>& children, const RunSession& session,
                ShutdownDeadline& deadline) {
  if (trained) wait_for_local_workers(children);
  else stop_local_workers(children);
  const int code = serve_exit_code(run_code, session.signal_received());
  deadline.arm(code);
  return code;
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
  command->add_option("--port-file", options->port_file,
                      "once listening, write where, {\"host\":\"...\",\"port\":N} (the port 0 picked), to this "
                      "file as one line of JSON ('-': standard output); removed when the server stops");
  command->add_option("--token", options->token,
                      fmt::format("join token workers must present (default ${}, then cluster.join_token)",
                                  join_token_variable))
      ->envname(join_token_variable);
  command->add_option("--resume", options->resume, "continue from this checkpoint file");
  command->add_flag("--remote-shards", options->remote_shards,
                    "with cluster.servers = K: expect shards 1..K-1 from `psgrad shard --index i` processes");
  // How the run is started again, for the hint an interrupted run prints (launch gives its own).
  command->add_option("--resume-command", options->resume_command)->group("");
  command->add_flag("--launched", options->launched,
                    "started by `psgrad launch`: read the join token from the first line of standard input, "
                    "and stop (saving the run) when standard input closes");
  return {command, [options] { return run_serve_command(*options); }};
}

int run_serve_command(const ServeOptions& given) {
  const ErrorExit error{"psgrad serve"};
  ServeOptions options = given;
  if (options.resume_command.empty())
    options.resume_command = resume_command(options, options.remote_shards ? "serve --remote-shards" : "serve");
  if (options.launched) {
    auto token = take_launch_token(LaunchedAs::server);
    if (!token) return error.refused(token.error());
    options.token = *token;
  }
  std::optional<PortFile> port_file;
  if (!options.port_file.empty()) {
    auto created = PortFile::create(options.port_file);
    if (!created) return error.refused("--port-file: " + created.error());
    port_file.emplace(std::move(*created));
  }
  RunSession session;
  if (auto opened = session.open(run_options_of(options), options.resume); !opened)
    return ErrorExit{"psgrad"}.refused(opened.error());
  auto& run = session.run();
  auto actor_config = session.actor_config();
  actor_config.help_server_steps_from_a_thread();
  ShutdownDeadline deadline(std::chrono::seconds(10));
  caf::actor_system system{actor_config};
  ServeSetup setup;
  setup.job = run.job();
  setup.config = run.config_text;
  // A model with tables: its dense part here, every table shard in a `psgrad shard --tables` process.
  if (run.tables) {
    setup.tables = ServedTables{run.tables->data.dev, table_optimizer_choice(run.config.tables),
                                !options.save_model.empty()};
    setup.train_data = fingerprint_of(*run.tables->data.train, run.tables->data.train->origin);
  } else {
    setup.dev = run.data.dev;
    setup.train_data = run.data.train_fingerprint;
  }
  if (auto gate = set_serve_gate(setup, run.config, options.token, options.spawn_local_workers); !gate)
    return error.failed(gate.error());
  if (session.resume()) setup.resume = std::make_shared<const TrainingCheckpoint>(*session.resume());
  setup.remote_shards = options.remote_shards;
  session.attach(setup, "psgrad serve");
  setup.on_snapshot = session.snapshot_callback();
  setup.on_report = run.output->callback();
  // train --processes: the table shards' processes, then the workers'.
  std::vector<ChildProcess> children;
  const std::size_t table_shards = run.tables ? setup.job.cluster.servers : 0;
  if (options.spawn_local_workers)
    setup.joiners_gone = [&children, expected = table_shards + setup.job.cluster.num_workers] {
      return ended_before_joining(children, expected);
    };
  setup.on_listening = [&](std::uint16_t port) {
    // The file before the line: a launch that reads the line finds the file there too.
    write_port_file_or_stop(port_file, {setup.host, port}, "psgrad serve");
    say_listening(setup, port);
    if (options.spawn_local_workers) {
      if (table_shards > 0) children = start_local_table_shards(table_shards, port, setup.token);
      for (auto& worker : start_local_workers(setup.job.cluster.num_workers, port, options.data_dir, setup.token))
        children.push_back(std::move(worker));
    }
  };
  session.training_started();
  const auto outcome = serve_training(system, setup);
  if (outcome && setup.tables && setup.tables->collect_rows) {
    std::size_t rows = 0;
    for (const auto& table : outcome->tables) rows += table.keys.size();
    fmt::print(stderr, "psgrad serve: the {} table shards held {} rows\n", table_shards, rows);
  }
  int run_code = 0;
  if (!outcome) run_code = session.finish(Error{outcome.error()});
  else if (!run.tables) run_code = session.finish(outcome->run);
  else
    run_code = session.finish(outcome->run, [&](const std::string& path, const Weights& weights) {
      return save_tables_model(path, run, *outcome, weights);
    });
  if (const auto note = shared_memory_note(); !note.empty()) fmt::print(stderr, "psgrad serve: {}\n", note);
  return end_serving(run_code, outcome.ok(), children, session, deadline);
}

}  // namespace psgrad
