// Turns `psgrad launch` options into a plan of roles and their settings, then runs it (launch_run.hpp).
#include "apps/launch_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <unistd.h>

#include <fmt/format.h>

#include "apps/error_exit.hpp"
#include "apps/invoked_program.hpp"
#include "apps/join_token.hpp"
#include "apps/launch_run.hpp"
#include "apps/tables_run.hpp"
#include "launch/hostfile.hpp"
#include "launch/launch_plan.hpp"
#include "launch/shell_quote.hpp"

namespace psgrad {

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    auto end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const auto dir = dirs.substr(start, end - start);
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

std::string this_binary() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("psgrad") : path.string();
}

}  // namespace

Command add_launch_command(CLI::App& app) {
  auto options = std::make_shared<LaunchOptions>();
  auto* command = app.add_subcommand(
      "launch", "Start every role of a run on the hosts of a hostfile (over ssh), or one Slurm task's role");
  command->add_option("--hostfile", options->hostfile,
                      "one `HOST [workers=N] [shards=K]` per line; the first host serves");
  command->add_option("--config", options->config,
                      "the run's config (read on the first host; with --resume, the checkpoint's own run is the "
                      "default)");
  command->add_option("--set", options->overrides, "override a config value, section.key=value (repeatable)");
  command->add_option("--data-dir", options->data, "data folder for every role (default: each host's own default)");
  command->add_option("--ssh-option", options->ssh_options,
                      "an ssh -o option for every remote host, e.g. IdentityFile=~/.ssh/cluster (repeatable)");
  command->add_option("--remote-psgrad", options->remote_psgrad,
                      "the psgrad binary's path on the other hosts (default: this binary's path)");
  command->add_flag("--slurm", options->slurm,
                    "inside `srun`: task 0 serves on the first node, the others work; the token comes from "
                    "$PSGRAD_JOIN_TOKEN");
  command->add_option("--port", options->port, "--slurm: the server's port (default 20000 + job id mod 20000)")
      ->check(CLI::Range(0, 65535));
  command->add_option("--resume", options->resume, "the server continues from this checkpoint (on the first host)");
  auto* metrics = command->add_option("--metrics", options->metrics,
                                      "the server's metrics file, JSON lines (default runs/<UTC time>-<mode>.jsonl)");
  command->add_flag("--no-metrics", options->no_metrics, "the server writes no metrics file")->excludes(metrics);
  command->add_option("--trace", options->trace, "the server writes a Chrome trace of the run to this file");
  command->add_option("--save", options->save, "the server writes the final model to this file (for eval, predict)");
  command->add_option("--tensorboard", options->tensorboard, "the server writes TensorBoard event files here");
  command->add_flag("--dry-run", options->dry_run, "print each role's host and command, start nothing");
  return {command, [options] { return run_launch_command(*options); }};
}

int run_launch_command(const LaunchOptions& options) {
  const ErrorExit error{"psgrad launch"};
  // A config this machine cannot read is judged by the server, as a dense run's.
  RunOptions run;
  run.config_path = options.config;
  run.overrides = options.overrides;
  const bool tables = names_model_with_tables(run, options.resume);
  if (options.slurm) {
    if (!options.hostfile.empty()) return error.refused("give --hostfile or --slurm, not both");
    // A model with tables: tasks 1..cluster.servers hold its table shards.
    int table_shards = 0;
    if (tables) {
      auto config = load_config(options.config, options.overrides);
      if (!config) return error.refused(config.error());
      table_shards = static_cast<int>(config->cluster.servers);
    }
    return run_slurm_task(options, table_shards);
  }
  if (options.hostfile.empty())
    return error.refused("give --hostfile FILE (one `HOST [workers=N] [shards=K]` a line) or --slurm");
  auto hosts = read_hostfile(options.hostfile);
  if (!hosts) return error.refused(hosts.error());
  auto plan = plan_launch(*hosts, options.hostfile, tables);
  if (!plan) return error.refused(plan.error());
  if (plan->any_remote && !on_path("ssh"))
    return error.refused("ssh not found on PATH; hosts other than localhost are started with OpenSSH "
                         "(apt-get install openssh-client)");
  std::error_code ignored;
  LaunchSettings settings;
  settings.psgrad = options.remote_psgrad.empty() ? this_binary() : options.remote_psgrad;
  settings.directory = std::filesystem::current_path(ignored).string();
  if (options.config.empty() && options.resume.empty())
    return error.refused("--config: a config file is required, unless --resume names a checkpoint whose run to "
                         "continue");
  settings.config = options.config.empty() ? "" : std::filesystem::absolute(options.config, ignored).string();
  settings.overrides = options.overrides;
  settings.no_metrics = options.no_metrics;
  // The server runs in this folder on the first host; absolute paths say so on its command line too.
  auto absolute = [&ignored](const std::string& path) {
    return path.empty() ? path : std::filesystem::absolute(path, ignored).string();
  };
  settings.resume = absolute(options.resume);
  // The checkpoint holds the config and its overrides; the hostfile and data folder say where to run.
  settings.resume_command = invoked_program() + " launch --hostfile " + shell_quoted(absolute(options.hostfile));
  if (!options.data.empty()) settings.resume_command += " --data-dir " + shell_quoted(absolute(options.data));
  settings.trace = absolute(options.trace);
  settings.metrics = absolute(options.metrics);
  settings.save = absolute(options.save);
  settings.tensorboard = absolute(options.tensorboard);
  settings.data = options.data.empty() ? "" : std::filesystem::absolute(options.data, ignored).string();
  if (const char* data = std::getenv("PSGRAD_DATA")) settings.data_env = data;
  settings.ssh_options = options.ssh_options;
  if (options.dry_run) {
    settings.server_port_file = server_port_file(*plan, port_folder_template());
    for (const auto& role : plan->roles)
      fmt::print("{} {}: {}\n", role.host, role.label(), shell_command(role_command(role, *plan, settings, 0)));
    return 0;
  }
  auto token = new_join_token();
  if (!token) return error.failed(token.error());
  if (plan->tables)
    fmt::print(stderr, "psgrad launch: {} roles on {} hosts: 1 server, {} table shard process(es), {} worker(s)\n",
               plan->roles.size(), hosts->size(), plan->servers, plan->workers);
  else
    fmt::print(stderr, "psgrad launch: {} roles on {} hosts: 1 server, {} shard process(es), {} worker(s)\n",
               plan->roles.size(), hosts->size(), plan->servers - 1, plan->workers);
  std::fflush(stderr);
  return run_launch(std::move(*plan), std::move(settings), std::move(*token));
}

}  // namespace psgrad
