// The config's sections as tables (one entry per key), and parsing and validating through them; either
// format gives the same document to validate.
#include "io/config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "io/bounded_file.hpp"
#include "io/config_paths.hpp"
#include "io/config_keys.hpp"
#include "io/config_validator.hpp"
#include "io/layer_graph_reader.hpp"
#include "io/ray_section.hpp"
#include "io/thinc_document.hpp"
#include "io/toml_text.hpp"
#include "io/user_text.hpp"
#include "model/table_graph.hpp"
#include "model/checked_count.hpp"
#include "model/layer_registry.hpp"
#include "model/registry.hpp"
#include "model/schedule.hpp"
#include "model/table_optimizer.hpp"
#include "model/training_mode.hpp"
#include "model/wire_encoding.hpp"

namespace psgrad {

namespace {

using namespace config_table;

constexpr const char* kLayersKey = "@layers";
// A config is a few hundred bytes; a megabyte leaves room for long lists of layer widths.
constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{1} << 20;
constexpr const char* kOptimizersKey = "@optimizers";
constexpr const char* kSchedulesKey = "@schedules";

// In the order they are validated (and rendered, in config_render.cpp).
const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = {"training", "evaluation", "model", "optimizer",
                                                 "tables",   "data",       "cluster"};
  return names;
}

// [model] and [optimizer]: a registered name under "@layers" / "@optimizers", then that entry's settings.
struct RegistrySection {
  const char* name;       // "model"
  const char* name_key;   // "@layers"
  const char* what;       // "architecture", for messages
  std::vector<std::string> (*known_names)();
  // Null: not registered. The settings share their entry's ownership, so they stay valid if the name is
  // registered again while a config is read.
  std::function<std::shared_ptr<const std::vector<SettingSpec>>(const std::string&)> settings_of;
};

template <class Entry>
std::shared_ptr<const std::vector<SettingSpec>> settings_of(const std::shared_ptr<const Entry>& entry) {
  if (!entry) return nullptr;
  return std::shared_ptr<const std::vector<SettingSpec>>(entry, &entry->settings);  // aliases the entry
}

const RegistrySection model_section{"model", kLayersKey, "architecture", architecture_names,
                                    [](const std::string& name) { return settings_of(find_architecture(name)); }};
const RegistrySection optimizer_section{"optimizer", kOptimizersKey, "optimizer", optimizer_names,
                                        [](const std::string& name) { return settings_of(find_optimizer(name)); }};

template <class Section>
Status read_section(const toml::table& document, const Validator& validator, const SectionTable<Section>& table,
                    Section& out) {
  auto settings = validator.read_settings(document.get_as<toml::table>(table.name()), table.name(), table.specs(),
                                          {}, "");
  if (!settings) return Error{settings.error()};
  table.read(*settings, out);
  return success();
}

// [data]: its keys, then its [data.columns] sub-table of named columns.
Status read_data_section(const toml::table& document, const Validator& validator, DataSection& out) {
  const auto* section = document.get_as<toml::table>(data_table().name());
  auto settings = validator.read_settings(section, data_table().name(), data_table().specs(), {kDataColumnsKey}, "");
  if (!settings) return Error{settings.error()};
  data_table().read(*settings, out);
  return read_data_columns(section, validator, out);
}

// When --set chose another architecture or optimizer than the file, the file's settings the new choice
// does not have belonged to the old one: they are dropped with a note rather than refused, so
// `--set optimizer.@optimizers=SGD.v1` works on a config written for Adam.v1. Settings --set gave
// itself are kept (and checked).
void drop_settings_of_replaced_choice(toml::table& section, const Validator& validator, const RegistrySection& registry,
                                      const std::string& chosen, const std::vector<SettingSpec>& specs,
                                      std::initializer_list<std::string> kept, std::vector<std::string>& notes) {
  const std::string section_name = registry.name;
  if (!validator.from_override(section_name + "." + registry.name_key)) return;
  std::vector<std::string> dropped;
  for (const auto& [key_node, node] : section) {
    const std::string key(key_node.str());
    const bool known = key == registry.name_key || std::find(kept.begin(), kept.end(), key) != kept.end() ||
                       std::any_of(specs.begin(), specs.end(), [&](const SettingSpec& s) { return s.name == key; });
    if (known || validator.from_override(section_name + "." + key)) continue;
    dropped.push_back(key);
    auto value = to_setting_value(node);
    notes.push_back(fmt::format("{}: {}.{} = {} dropped: {} has no such setting (--set chose {} \"{}\")",
                                validator.source(), section_name, key,
                                value ? toml_text(*value) : describe_node(node), chosen, registry.what, chosen));
  }
  for (const auto& key : dropped) section.erase(key);
}

Status read_section(const toml::table& document, const Validator& validator, const RegistrySection& registry,
                    const std::string& default_name, std::string& name, Settings& settings,
                    std::vector<std::string>& notes, const toml::table* section_override = nullptr) {
  const auto* original = section_override ? section_override : document.get_as<toml::table>(registry.name);
  auto chosen = validator.read_registry_name(original, registry.name, registry.name_key, registry.what,
                                             registry.known_names(), default_name);
  if (!chosen) return Error{chosen.error()};
  const auto specs = registry.settings_of(*chosen);
  if (!specs)  // the default itself is not registered: a build problem, still an error value
    return Error{fmt::format("{}: {}.{}: {} \"{}\" is not registered", validator.source(), registry.name,
                             registry.name_key, registry.what, *chosen)};
  std::optional<toml::table> trimmed;
  if (original) {
    trimmed = *original;
    drop_settings_of_replaced_choice(*trimmed, validator, registry, *chosen, *specs, {}, notes);
  }
  auto read = validator.read_settings(trimmed ? &*trimmed : nullptr, registry.name, *specs, {registry.name_key},
                                      *chosen);
  if (!read) return Error{read.error()};
  name = *chosen;
  settings = std::move(*read);
  return success();
}

// [model]: a registered architecture and its settings, or a graph of Thinc's layers.
Status read_model_section(const toml::table& document, const Validator& validator, Config& config) {
  const auto* section = document.get_as<toml::table>(model_section.name);
  const auto* chosen = section ? section->get_as<std::string>(kLayersKey) : nullptr;
  if (chosen && !find_architecture(chosen->get()) && !find_layer(chosen->get()))
    return validator.fail(std::string(model_section.name) + "." + kLayersKey,
                          fmt::format("unknown architecture or layer {}; architectures: {}; Thinc's layers: chain.v1, "
                                      "Relu.v1, ... (`psgrad config reference` lists them)",
                                      echoed(toml_string(chosen->get())),
                                      fmt::format("\"{}\"", fmt::join(architecture_names(), "\", \""))));
  if (!names_layer_graph(section))
    return read_section(document, validator, model_section, ModelSection{}.architecture, config.model.architecture,
                        config.model.settings, config.notes);
  auto graph = read_layer_graph(*section, model_section.name, validator);
  if (!graph) return Error{graph.error()};
  config.model.architecture = graph->name;
  config.model.settings.clear();
  config.model.graph = std::move(*graph);
  return success();
}

// [optimizer.learn_rate] with "@schedules": a registered schedule with Thinc's parameter names.
Status read_schedule(const toml::table& schedule_table, const Validator& validator, OptimizerSection& out) {
  const std::string path = "optimizer.learn_rate";
  auto chosen = validator.read_registry_name(&schedule_table, path, kSchedulesKey, "schedule", schedule_names(), "");
  if (!chosen) return Error{chosen.error()};
  const auto entry = find_schedule(*chosen);
  const bool nests = *chosen == "constant_then.v1";  // its following schedule is a section inside it
  auto read = validator.read_settings(&schedule_table, path, entry->settings,
                                      nests ? std::initializer_list<std::string>{kSchedulesKey, "schedule"}
                                            : std::initializer_list<std::string>{kSchedulesKey},
                                      *chosen);
  if (!read) return Error{read.error()};
  out.schedule = *chosen;
  out.schedule_settings = std::move(*read);
  if (nests) {
    const std::string inner_path = path + ".schedule";
    const auto* inner = schedule_table.get_as<toml::table>("schedule");
    if (!inner) return validator.fail(inner_path, "constant_then.v1 needs its following schedule: a [" + inner_path +
                                                      "] section with \"@schedules\"");
    auto then = validator.read_registry_name(inner, inner_path, kSchedulesKey, "schedule", schedule_names(), "");
    if (!then) return Error{then.error()};
    if (*then == "constant_then.v1") return validator.fail(inner_path, "psgrad nests constant_then.v1 once");
    auto then_settings = validator.read_settings(inner, inner_path, find_schedule(*then)->settings, {kSchedulesKey}, *then);
    if (!then_settings) return Error{then_settings.error()};
    out.then_schedule = *then;
    out.then_settings = std::move(*then_settings);
  }
  auto schedule = learn_rate_schedule(out);
  if (!schedule) return validator.fail(path, schedule.error());
  // Thinc's optimizer takes its learn_rate from the schedule's first value; so does the setting here.
  out.settings["learn_rate"] = SettingValue{(*schedule)->at(0)};
  return success();
}

// [optimizer]: the registered optimizer's settings, where learn_rate may instead be a schedule table.
Status read_optimizer(const toml::table& document, const Validator& validator, OptimizerSection& out,
                      std::vector<std::string>& notes) {
  const auto* section = document.get_as<toml::table>(optimizer_section.name);
  const toml::table* schedule_table = section ? section->get_as<toml::table>("learn_rate") : nullptr;
  if (const auto* values = section ? section->get_as<toml::array>("learn_rate") : nullptr) {
    // Thinc's list: step n takes value n, the last one after. Each value is checked as learn_rate is.
    std::vector<double> rates;
    for (const auto& value : *values) {
      const auto rate = value.value<double>();
      if (!rate || !(*rate >= 0.0) || !std::isfinite(*rate))
        return validator.fail(optimizer_section.name + std::string(".learn_rate"),
                              "expected a number >= 0 or a list of them, got " + describe_node(*values));
      rates.push_back(*rate);
    }
    if (rates.empty())
      return validator.fail(std::string(optimizer_section.name) + ".learn_rate", "an empty list has no first rate");
    toml::table first = *section;
    first.insert_or_assign("learn_rate", rates.front());
    out.learn_rates = std::move(rates);
    return read_section(document, validator, optimizer_section, OptimizerSection{}.name, out.name, out.settings,
                        notes, &first);
  }
  if (!schedule_table)
    return read_section(document, validator, optimizer_section, OptimizerSection{}.name, out.name, out.settings,
                        notes);
  // Read the optimizer without its learn_rate (SGD.v1's is required: the schedule supplies it).
  toml::table without_rate = *section;
  without_rate.erase("learn_rate");
  without_rate.insert("learn_rate", 1.0);  // a placeholder the schedule's first value replaces
  Status read = read_section(document, validator, optimizer_section, OptimizerSection{}.name, out.name, out.settings,
                             notes, &without_rate);
  if (!read) return read;
  return read_schedule(*schedule_table, validator, out);
}

// [tables]: only for a model with embedding tables; Adagrad's keys only when it is chosen, and lazy Adam
// only where [optimizer] is an Adam.v1 it can follow.
Status read_tables_section(const toml::table& document, const Validator& validator, Config& config) {
  if (auto read = read_section(document, validator, tables_table(), config.tables); !read) return read;
  const auto* section = document.get_as<toml::table>(tables_table().name());
  const bool sparse = model_has_tables(config.model);
  if (!sparse) {
    if (section && !section->empty())
      return validator.fail("tables", fmt::format("sets embedding tables' optimizer, but model.@layers \"{}\" has no "
                                                  "embedding tables; remove [tables]",
                                                  config.model.architecture));
    return success();
  }
  if (config.tables.optimizer != "lazy_adam") return success();
  if (section)
    for (const auto& [key_node, node] : *section)
      if (key_node.str() != "optimizer")
        return validator.fail("tables." + std::string(key_node.str()),
                              "is an adagrad setting, but tables.optimizer is \"lazy_adam\", which takes "
                              "[optimizer]'s Adam.v1 settings; set tables.optimizer = \"adagrad\" or remove it");
  if (auto adam = lazy_adam_settings(config.optimizer); !adam)
    return validator.fail("tables.optimizer", adam.error() + "; or set tables.optimizer = \"adagrad\"");
  return success();
}

// The run's optimizer steps, as the driver counts them: iterations in sync, iterations x workers in async
// and ssp. Bounded (run_limits.hpp), so no count of steps wraps around to a small one.
Result<std::uint64_t> run_steps(const Config& config, const Validator& validator) {
  const auto iterations = static_cast<std::uint64_t>(config.training.iterations);
  const auto per_iteration = config.cluster.mode == TrainingMode::sync ? 1 : static_cast<std::uint64_t>(config.cluster.num_workers);
  const auto steps = checked_product(iterations, per_iteration);
  if (steps && *steps <= max_run_steps) return *steps;
  return validator.fail("training.iterations",
                        per_iteration == 1
                            ? fmt::format("expected at most {} (2^53), got {}", max_run_steps, iterations)
                            : fmt::format("expected at most {} (2^53) optimizer steps, got {} iterations x {} "
                                          "workers in {} mode",
                                          max_run_steps, iterations, per_iteration, mode_name(config.cluster.mode)));
}

// A schedule must be able to drive this run (schedule_problem): its problem is found here, not at the
// step where it would show.
Status check_schedule_over_run(const Config& config, std::uint64_t steps, const Validator& validator) {
  if (!config.optimizer.has_schedule()) return success();
  auto schedule = learn_rate_schedule(config.optimizer);
  if (!schedule) return validator.fail("optimizer.learn_rate", schedule.error());
  if (const auto problem = schedule_problem(**schedule, steps))
    return validator.fail("optimizer.learn_rate",
                          fmt::format("{} cannot drive this run: {}",
                                      config.optimizer.schedule.empty() ? "the list" : config.optimizer.schedule, *problem));
  return success();
}

Result<Config> validate(const toml::table& document, const Validator& validator) {
  for (const auto& [key_node, node] : document) {
    const std::string name(key_node.str());
    const auto& known = section_names();
    if (std::find(known.begin(), known.end(), name) == known.end())
      return validator.fail(name, std::string(node.is_table() ? "unknown section" : "unknown top-level key") +
                                      "; known sections: " + join(known));
    if (!node.is_table()) return validator.fail(name, "expected a table, got " + describe_node(node));
  }
  Config config;
  config.source = validator.source();
  Status read = read_section(document, validator, training_table(), config.training);
  if (read) read = read_section(document, validator, evaluation_table(), config.evaluation);
  if (read) read = read_model_section(document, validator, config);
  if (read) read = read_optimizer(document, validator, config.optimizer, config.notes);
  if (read) read = read_tables_section(document, validator, config);
  if (read) read = read_data_section(document, validator, config.data);
  if (read) read = read_section(document, validator, cluster_table(), config.cluster);
  if (!read) return Error{read.error()};
  // A step needs at least one gradient.
  if (config.cluster.backup_workers >= config.cluster.num_workers)
    return validator.fail("cluster.backup_workers",
                          fmt::format("expected fewer than cluster.num_workers ({}), got {}",
                                      config.cluster.num_workers, config.cluster.backup_workers));
  if (config.cluster.mode == TrainingMode::sync && config.cluster.pipeline && config.cluster.backup_workers > 0)
    return validator.fail("cluster.pipeline",
                          fmt::format("sync with the pipeline takes every worker's gradient in each step, but "
                                      "cluster.backup_workers is {}",
                                      config.cluster.backup_workers));
  const bool keeps_averages =
      config.optimizer.settings.count("use_averages") > 0 && get_boolean(config.optimizer.settings, "use_averages");
  if (config.training.with_averages && !keeps_averages)
    return validator.fail("training.with_averages",
                          fmt::format("needs the optimizer's weight averages, but {} has use_averages = false: set "
                                      "it true (Thinc's default) or leave with_averages false",
                                      config.optimizer.name));
  const auto steps = run_steps(config, validator);
  if (!steps) return Error{steps.error()};
  if (auto driven = check_schedule_over_run(config, *steps, validator); !driven) return Error{driven.error()};
  return config;
}

// The text as the document to validate, in whichever format it is written.
Result<ConfigDocument> read_document(const std::string& text, const std::string& source,
                                     const std::vector<std::string>& overrides) {
  if (config_format(source, text) == ConfigFormat::thinc) {
    auto read_sections = section_names();
    read_sections.push_back("ray");  // fold_ray_section's
    return thinc_document(text, source, read_sections, overrides);
  }
  try {
    return ConfigDocument{toml::parse(std::string_view(text), std::string_view(source)), {}};
  } catch (const toml::parse_error& error) {
    const auto& begin = error.source().begin;
    return Error{fmt::format("{}:{}:{}: {}", source, begin.line, begin.column, error.description())};
  }
}

}  // namespace

const std::vector<SettingSpec>& training_settings() { return training_table().specs(); }
const std::vector<SettingSpec>& evaluation_settings() { return evaluation_table().specs(); }
const std::vector<SettingSpec>& tables_settings() { return tables_table().specs(); }
const std::vector<SettingSpec>& data_settings() { return data_table().specs(); }
const std::vector<SettingSpec>& cluster_settings() { return cluster_table().specs(); }

Result<Config> parse_config(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides, const std::vector<FlagSetting>& flags) {
  auto read = read_document(text, source, overrides);
  if (!read) return Error{read.error()};
  auto& [document, locations] = *read;
  OverrideRecord record;
  if (auto applied = apply_overrides(document, overrides, source, record); !applied)
    return Error{applied.error()};
  for (const auto& flag : flags) apply_flag(document, flag.flag, flag.path, flag.value, record);
  std::vector<std::string> notes;
  if (auto folded = fold_ray_section(document, source, record, locations, notes); !folded)
    return Error{folded.error()};
  // The registry and validation code report problems as values; anything thrown past here would be a
  // bug, but callers are promised no exceptions, so turn it into a message.
  try {
    auto config = validate(document, Validator(source, std::move(record), std::move(locations)));
    if (config) config->notes.insert(config->notes.begin(), notes.begin(), notes.end());
    return config;
  } catch (const std::exception& error) {
    return Error{source + ": internal error while validating the config: " + error.what()};
  }
}

Result<Config> load_config(const std::string& path, const std::vector<std::string>& overrides,
                           const std::vector<FlagSetting>& flags) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return Error{path + ": cannot open config file"};
  auto text = read_checked_file(path, "config file", kMaxConfigBytes);
  if (!text) return Error{text.error()};
  auto config = parse_config(*text, path, overrides, flags);
  if (!config) return config;
  if (auto resolved = resolve_config_paths(*config, path, overrides); !resolved) return Error{resolved.error()};
  return config;
}

}  // namespace psgrad
