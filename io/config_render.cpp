// Writes a resolved config, every default filled in, as TOML or in Thinc's config format.
#include <algorithm>
#include <sstream>

#include "io/config.hpp"
#include "io/config_keys.hpp"
#include "io/thinc_value.hpp"
#include "io/toml_text.hpp"
#include "model/table_graph.hpp"
#include "model/layer_registry.hpp"
#include "model/registry.hpp"
#include "model/schedule.hpp"

namespace psgrad {

namespace {

using namespace config_table;

// How a format spells a key and a value; the sections and their order are the same in both.
struct Spelling {
  std::string (*key)(const std::string&);
  std::string (*value)(const SettingValue&);
};

std::string thinc_key(const std::string& key) { return key; }  // "@layers" needs no quotes there
std::string thinc_setting(const SettingValue& value) { return thinc_text(to_thinc_value(value)); }

Spelling spelling_of(ConfigFormat format) {
  if (format == ConfigFormat::thinc) return {thinc_key, thinc_setting};
  return {toml_key, toml_text};
}

// Writes settings in spec order, filling defaults for any the caller left out, then any settings no
// spec knows (so nothing is silently dropped; parsing will name them).
void render_settings(std::ostringstream& out, const Spelling& spelling, const std::vector<SettingSpec>& specs,
                     const Settings& settings) {
  for (const auto& spec : specs) {
    auto it = settings.find(spec.name);
    if (it != settings.end()) out << spelling.key(spec.name) << " = " << spelling.value(it->second) << "\n";
    else if (spec.default_value) out << spelling.key(spec.name) << " = " << spelling.value(*spec.default_value) << "\n";
  }
  for (const auto& [name, value] : settings) {
    const bool specified =
        std::any_of(specs.begin(), specs.end(), [&](const SettingSpec& s) { return s.name == name; });
    if (!specified) out << spelling.key(name) << " = " << spelling.value(value) << "\n";
  }
}

template <class Section>
void render_section(std::ostringstream& out, const Spelling& spelling, const SectionTable<Section>& table,
                    const Section& section) {
  out << "[" << table.name() << "]\n";
  render_settings(out, spelling, table.specs(), table.values(section));
}

// [model] or [optimizer]: the registered name under its "@" key, then that entry's settings.
void render_choice(std::ostringstream& out, const Spelling& spelling, const char* section, const char* name_key,
                   const std::string& name, const std::vector<SettingSpec>& specs, const Settings& settings) {
  out << "[" << section << "]\n" << spelling.key(name_key) << " = " << spelling.value(SettingValue{name}) << "\n";
  render_settings(out, spelling, specs, settings);
}

template <class Entry>
std::vector<SettingSpec> specs_of(const std::shared_ptr<const Entry>& entry) {
  return entry ? entry->settings : std::vector<SettingSpec>{};
}

// With a schedule, learn_rate is written as the [optimizer.learn_rate] section (after the section's own
// keys, as TOML requires), not as the number it starts at.
void render_optimizer(std::ostringstream& out, const Spelling& spelling, const OptimizerSection& optimizer) {
  auto specs = specs_of(find_optimizer(optimizer.name));
  if (!optimizer.learn_rates.empty()) {  // a list: written where the number would be
    std::string list;
    for (const auto rate : optimizer.learn_rates) list += (list.empty() ? "" : ", ") + spelling.value(SettingValue{rate});
    Settings settings = optimizer.settings;
    settings.erase("learn_rate");
    out << "[optimizer]\n" << spelling.key("@optimizers") << " = " << spelling.value(SettingValue{optimizer.name})
        << "\n" << spelling.key("learn_rate") << " = [" << list << "]\n";
    specs.erase(std::remove_if(specs.begin(), specs.end(), [](const SettingSpec& s) { return s.name == "learn_rate"; }),
                specs.end());
    render_settings(out, spelling, specs, settings);
    return;
  }
  if (optimizer.schedule.empty())
    return render_choice(out, spelling, "optimizer", "@optimizers", optimizer.name, specs, optimizer.settings);
  Settings settings = optimizer.settings;
  settings.erase("learn_rate");
  specs.erase(std::remove_if(specs.begin(), specs.end(), [](const SettingSpec& s) { return s.name == "learn_rate"; }),
              specs.end());
  render_choice(out, spelling, "optimizer", "@optimizers", optimizer.name, specs, settings);
  const auto entry = find_schedule(optimizer.schedule);
  out << "\n";
  render_choice(out, spelling, "optimizer.learn_rate", "@schedules", optimizer.schedule,
                entry ? entry->settings : std::vector<SettingSpec>{}, optimizer.schedule_settings);
  if (optimizer.then_schedule.empty()) return;
  const auto then = find_schedule(optimizer.then_schedule);
  out << "\n";
  render_choice(out, spelling, "optimizer.learn_rate.schedule", "@schedules", optimizer.then_schedule,
                then ? then->settings : std::vector<SettingSpec>{}, optimizer.then_settings);
}

std::vector<SettingSpec> architecture_specs(const std::string& architecture) {
  return specs_of(find_architecture(architecture));
}

// A layer graph's sections: the layer, its arguments as written (the defaults are the layer's), then
// its positional layers [path.*.name] in order and its named layers [path.name].
void render_layer_graph(std::ostringstream& out, const Spelling& spelling, const LayerSpec& spec,
                        const std::string& header) {
  out << "[" << header << "]\n" << spelling.key("@layers") << " = " << spelling.value(SettingValue{spec.name}) << "\n";
  const auto entry = find_layer(spec.name);
  for (const auto& argument : entry ? entry->arguments : std::vector<SettingSpec>{})
    if (const auto value = spec.arguments.find(argument.name); value != spec.arguments.end())
      out << spelling.key(argument.name) << " = " << spelling.value(value->second) << "\n";
  // Thinc requires the positional section of a layer that takes them, even when it is empty (noop's).
  if (entry && entry->takes_positional && spec.positional.empty())
    out << "\n[" << header << "." << spelling.key("*") << "]\n";
  for (const auto& [key, layer] : spec.positional) {
    out << "\n";
    render_layer_graph(out, spelling, layer, header + "." + spelling.key("*") + "." + spelling.key(key));
  }
  for (const auto& [key, layer] : spec.named) {
    out << "\n";
    render_layer_graph(out, spelling, layer, header + "." + spelling.key(key));
  }
  for (const auto& [key, initializer] : spec.initializers) {
    out << "\n[" << header << "." << spelling.key(key) << "]\n"
        << spelling.key("@initializers") << " = " << spelling.value(SettingValue{initializer.name}) << "\n";
    for (const auto& [name, value] : initializer.arguments)
      out << spelling.key(name) << " = " << spelling.value(value) << "\n";
  }
}

void render_model(std::ostringstream& out, const Spelling& spelling, const ModelSection& model) {
  if (!model.graph.empty()) return render_layer_graph(out, spelling, model.graph, "model");
  render_choice(out, spelling, "model", "@layers", model.architecture, architecture_specs(model.architecture),
                model.settings);
}

// Only a model with embedding tables has [tables]; lazy Adam's settings are [optimizer]'s, so its
// section holds the choice alone (Adagrad's keys would be refused beside it).
void render_tables(std::ostringstream& out, const Spelling& spelling, const Config& config) {
  if (!model_has_tables(config.model)) return;
  const auto& table = tables_table();
  if (config.tables.optimizer != "lazy_adam") {
    render_section(out, spelling, table, config.tables);
  } else {
    out << "[" << table.name() << "]\n"
        << spelling.key("optimizer") << " = " << spelling.value(SettingValue{config.tables.optimizer}) << "\n";
  }
  out << "\n";
}

}  // namespace

std::string render_config(const Config& config, ConfigFormat format) {
  const auto spelling = spelling_of(format);
  std::ostringstream out;
  render_section(out, spelling, training_table(), config.training);
  out << "\n";
  render_section(out, spelling, evaluation_table(), config.evaluation);
  out << "\n";
  render_model(out, spelling, config.model);
  out << "\n";
  render_optimizer(out, spelling, config.optimizer);
  out << "\n";
  render_tables(out, spelling, config);
  render_section(out, spelling, data_table(), config.data);
  out << render_data_columns(config.data.columns, format) << "\n";
  render_section(out, spelling, cluster_table(), config.cluster);
  return out.str();
}

}  // namespace psgrad
