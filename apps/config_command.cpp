// Prints a config with every default filled in, validates one, or prints the generated reference.
#include "apps/config_command.hpp"

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "apps/error_exit.hpp"
#include "apps/sparse_data.hpp"
#include "apps/table_memory_check.hpp"
#include "apps/resource_check.hpp"
#include "apps/run_plan_check.hpp"
#include "io/config.hpp"
#include "io/config_reference.hpp"
#include "model/run_features.hpp"

namespace psgrad {

namespace {

void add_config_arguments(CLI::App& command, ConfigOptions& options) {
  command.add_option("config", options.config_path, "config file: TOML, or Thinc's format (.cfg, .ini)")->required();
  command.add_option("--set", options.overrides, "override a config value: section.key=value (repeatable)")
      ->allow_extra_args(false);
}

}  // namespace

Command add_config_command(CLI::App& app) {
  auto* command = add_command_group(app, "config", "Show, check or document configs");
  auto options = std::make_shared<ConfigOptions>();
  auto* show = command->add_subcommand("show", "Print the resolved config, every default filled in");
  add_config_arguments(*show, *options);
  show->add_option("--format", options->format, "toml (the default), or cfg: Thinc's config format")
      ->check(CLI::IsMember({"toml", "cfg"}));
  show->parse_complete_callback([options] { options->action = "show"; });
  auto* check = command->add_subcommand("check", "Validate a config: prints \"CONFIG: ok\" or the error (exit 2)");
  add_config_arguments(*check, *options);
  check->parse_complete_callback([options] { options->action = "check"; });
  auto* reference = command->add_subcommand("reference", "Print the Markdown reference of every setting");
  reference->parse_complete_callback([options] { options->action = "reference"; });
  auto* features = command->add_subcommand("features", "Print the Markdown table of features by parameter kind");
  features->parse_complete_callback([options] { options->action = "features"; });
  return {command, [options] { return run_config_command(*options); }, true};
}

int run_config_command(const ConfigOptions& options) {
  if (options.action == "reference") {
    std::fputs(config_reference_markdown().c_str(), stdout);
    return 0;
  }
  if (options.action == "features") {
    std::fputs(run_features_markdown().c_str(), stdout);
    return 0;
  }
  // Config errors start with the file they are about: they stand alone, without "psgrad: ".
  const ErrorExit error{""};
  auto config = load_config(options.config_path, options.overrides);
  if (!config) return error.refused(config.error());
  for (const auto& note : config->notes) fmt::print(stderr, "note: {}\n", note);
  if (options.action == "show") {
    std::fputs(render_config(*config, config_format_named(options.format).value_or(ConfigFormat::toml)).c_str(),
               stdout);
    return 0;
  }
  if (auto fits = check_model_fits_data(*config); !fits) return error.refused(fits.error());
  // What `check` accepts must run: a feature the model does not offer is refused here as `train` refuses it.
  if (auto offered = check_run_features(*config, is_sparse_model(*config)); !offered)
    return error.refused(fmt::format("{}: {}", config->source, offered.error()));
  if (auto threads = check_threads_start(*config); !threads) return error.refused(threads.error());
  if (is_sparse_model(*config)) {
    if (auto fits = check_tables_fit_machine(*config, config->cluster.servers); !fits)
      return error.refused(fits.error());
    fmt::print("{}: ok\n", options.config_path);
    return 0;
  }
  // A config that cannot run on this machine is not ok: say so before `train` would find out.
  if (auto fits = check_fits_machine(*config, default_data_dir(), ProcessRole::whole_run); !fits)
    return error.refused(fits.error());
  // Nor is one whose model, optimizer or shards cannot be built; sized like the data when its headers
  // can be read (loading will say why they cannot), else like MNIST.
  const auto peeked = peek_data_shape(data_source(config->data), default_data_dir());
  const auto shape = peeked ? *peeked : DataShape{};
  if (auto plan = check_run_plan(*config, shape.width, shape.classes); !plan) return error.refused(plan.error());
  fmt::print("{}: ok\n", options.config_path);
  return 0;
}

}  // namespace psgrad
