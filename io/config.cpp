// The config's sections as tables (one entry per key), and parsing, validating and rendering through them.
#include "io/config.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "io/bounded_file.hpp"
#include "io/config_validator.hpp"
#include "io/toml_text.hpp"
#include "model/registry.hpp"
#include "model/schedule.hpp"
#include "model/training_mode.hpp"
#include "model/wire_encoding.hpp"

namespace psgrad {

namespace {

constexpr const char* kLayersKey = "@layers";
// A config is a few hundred bytes; a megabyte leaves room for long lists of layer widths.
constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{1} << 20;
constexpr const char* kOptimizersKey = "@optimizers";
constexpr const char* kSchedulesKey = "@schedules";

// In the order they are validated and rendered.
const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = {"training", "evaluation", "model",
                                                 "optimizer", "data",       "cluster"};
  return names;
}

// What a key's value is checked against besides its type.
struct Check {
  std::optional<double> minimum;
  std::optional<double> maximum;
  std::vector<std::string> choices;
  bool minimum_exclusive = false;
  bool maximum_exclusive = false;
};
Check at_least(double minimum) { return {minimum, std::nullopt, {}}; }
Check within(double minimum, double maximum) { return {minimum, maximum, {}}; }
Check one_of(std::vector<std::string> choices) { return {std::nullopt, std::nullopt, std::move(choices)}; }
Check share() { return {0.0, 1.0, {}, true}; }  // in (0, 1]
// Durations are at most 30 days: converted to CAF's nanosecond clock, far larger ones overflow and
// time out at once (request_timeout_ms = 2^63 - 1 dropped every worker on its first request).
constexpr double kMaxMilliseconds = 30.0 * 24 * 60 * 60 * 1000;
Check milliseconds_from(double minimum) { return within(minimum, kMaxMilliseconds); }
Check above(double minimum) { return {minimum, std::nullopt, {}, true, false}; }
Check from_below(double minimum, double maximum) { return {minimum, maximum, {}, false, true}; }

// The setting types a section member can have, both ways.
SettingValue to_value(std::int64_t x) { return SettingValue{x}; }
SettingValue to_value(std::uint64_t x) { return SettingValue{static_cast<std::int64_t>(x)}; }
SettingValue to_value(bool x) { return SettingValue{x}; }
SettingValue to_value(double x) { return SettingValue{x}; }
SettingValue to_value(const std::string& x) { return SettingValue{x}; }
void read_value(const Settings& settings, const std::string& name, std::int64_t& out) {
  out = get_integer(settings, name);
}
void read_value(const Settings& settings, const std::string& name, std::uint64_t& out) {
  out = static_cast<std::uint64_t>(get_integer(settings, name));  // its spec checks it is >= 0
}
void read_value(const Settings& settings, const std::string& name, bool& out) { out = get_boolean(settings, name); }
void read_value(const Settings& settings, const std::string& name, double& out) { out = get_number(settings, name); }
void read_value(const Settings& settings, const std::string& name, std::string& out) {
  out = get_text(settings, name);
}

// One key of a fixed section: its spec, and the member of the section struct that holds its value.
template <class Section>
struct Key {
  SettingSpec spec;
  std::function<void(const Settings&, Section&)> read;
  std::function<SettingValue(const Section&)> value;
};

// The key's type follows from the member; its default is the struct's own, so it is written only there.
template <class Section, class Member>
Key<Section> key(const std::string& name, Member Section::*member, std::string description, Check check = {}) {
  Key<Section> entry;
  entry.read = [name, member](const Settings& settings, Section& section) { read_value(settings, name, section.*member); };
  entry.value = [member](const Section& section) { return to_value(section.*member); };
  auto& spec = entry.spec;
  spec.name = name;
  if constexpr (std::is_same_v<Member, bool>) spec.kind = SettingKind::boolean;
  else if constexpr (std::is_same_v<Member, std::string>) spec.kind = SettingKind::text;
  else if constexpr (std::is_same_v<Member, double>) spec.kind = SettingKind::number;
  else spec.kind = SettingKind::integer;
  spec.default_value = entry.value(Section{});
  spec.description = std::move(description);
  spec.minimum = check.minimum;
  spec.maximum = check.maximum;
  spec.minimum_exclusive = check.minimum_exclusive;
  spec.maximum_exclusive = check.maximum_exclusive;
  spec.choices = std::move(check.choices);
  return entry;
}

template <class Section>
class SectionTable {
 public:
  SectionTable(std::string name, std::vector<Key<Section>> keys) : name_(std::move(name)), keys_(std::move(keys)) {
    for (const auto& key : keys_) specs_.push_back(key.spec);
  }
  const std::string& name() const { return name_; }
  const std::vector<SettingSpec>& specs() const { return specs_; }
  void read(const Settings& settings, Section& section) const {
    for (const auto& key : keys_) key.read(settings, section);
  }
  Settings values(const Section& section) const {
    Settings settings;
    for (const auto& key : keys_) settings.emplace(key.spec.name, key.value(section));
    return settings;
  }

 private:
  std::string name_;
  std::vector<Key<Section>> keys_;
  std::vector<SettingSpec> specs_;
};

const SectionTable<TrainingSection>& training_table() {
  using S = TrainingSection;
  static const SectionTable<S> table{"training", {
      key("iterations", &S::iterations,
          "Number of training steps; each one gathers gradients from the workers and updates the weights.", at_least(1)),
      key("batch_size", &S::batch_size, "Number of training examples in each minibatch a worker computes gradients on.",
          at_least(1)),
      key("seed", &S::seed, "Random seed for weight initialisation, shuffling and dropout, so runs can be repeated.",
          at_least(0)),
      key("checkpoint_every", &S::checkpoint_every,
          "Save a checkpoint every this many iterations; 0 saves only at the end.", at_least(0)),
      key("checkpoint_path", &S::checkpoint_path, "File the weights are checkpointed to; empty disables checkpoints."),
      key("patience", &S::patience,
          "Stop early after this many evaluations in a row without a better dev accuracy; 0 never stops early.",
          within(0, 1e12)),
      key("save_best", &S::save_best,
          "Keep the weights of the best dev evaluation (for --save, --save-weights and the summary) instead of the "
          "last ones."),
  }};
  return table;
}

const SectionTable<EvaluationSection>& evaluation_table() {
  using S = EvaluationSection;
  static const SectionTable<S> table{"evaluation", {
      key("batch_size", &S::batch_size, "Number of dev-set examples scored per forward pass during evaluation.",
          at_least(1)),
      key("frequency", &S::frequency, "Evaluate accuracy on the dev set every this many iterations.", at_least(1)),
  }};
  return table;
}

const SectionTable<DataSection>& data_table() {
  using S = DataSection;
  static const SectionTable<S> table{"data", {
      key("name", &S::name, "Named data set to train on, used when path is empty.", one_of({"mnist", "fashion-mnist"})),
      key("path", &S::path,
          "Your own data instead of the named data set: a folder of IDX files, a folder of x_train.npy, "
          "y_train.npy (and x_test.npy, y_test.npy), an .npz with x_train, y_train (and x_test, y_test), or a "
          "CSV file of a label column and feature columns (header optional); empty uses name."),
      key("label_column", &S::label_column,
          "CSV: the column holding the label, counted from 0; -1 is the last column. Labels are whole numbers "
          "from 0 to 255; the classes are 0 to the largest label of train and dev."),
      key("dev_path", &S::dev_path,
          "Dev examples in any of path's formats (a CSV file's rows, the test part of the others); replaces "
          "any test part of path. Empty: path's own test part, or dev_fraction."),
      key("dev_fraction", &S::dev_fraction,
          "Share of path's examples held out as the dev set (the last of each class, in file order) when "
          "path has no test part and dev_path is empty; 0 holds out none.",
          from_below(0, 1)),
      key("scale", &S::scale,
          "CSV and NumPy features are multiplied by this (0.00392156862745098 is 1/255, for pixel bytes); "
          "IDX pixels are always divided by 255.",
          above(0)),
  }};
  return table;
}

const SectionTable<ClusterSection>& cluster_table() {
  using S = ClusterSection;
  static const SectionTable<S> table{"cluster", {
      key("num_workers", &S::num_workers, "Number of workers that compute gradients in parallel.",
          within(1, max_workers)),
      key("threads", &S::threads, "Scheduler threads for the actor system; 0 uses one per machine core. In one process with as many workers as threads or more (and no more threads than cores), idle threads poll 200 µs before they sleep. A server or shard process with 2 or more threads on 2 or more cores keeps one more thread, which takes half of each plain sync step.",
          within(0, max_scheduler_threads)),
      key("mode", &S::mode, "sync waits for every worker's gradients each step; async applies each as it arrives.",
          one_of(names_in(training_mode_names))),
      key("servers", &S::servers,
          "Parameter-server shards: the weights are split on array boundaries, each shard with its own optimizer.",
          within(1, 64)),
      key("wire", &S::wire,
          "How weights and gradients travel: fp32 exactly; bf16 rounded to bfloat16 (the server keeps fp32 "
          "weights and sums); topk sends each gradient's largest entries per array, the rest added to that "
          "worker's next gradient (weights exact).",
          one_of(names_in(wire_encoding_names))),
      key("topk_fraction", &S::topk_fraction,
          "wire topk: the share of each parameter array's entries a gradient sends (at least one per array).",
          share()),
      key("staleness", &S::staleness,
          "ssp mode: how many gradients a worker may get ahead of the slowest one (0 is lock-step).", at_least(0)),
      key("backup_workers", &S::backup_workers,
          "sync mode: each step uses the first num_workers - backup_workers gradients to arrive and drops the "
          "rest, so stragglers do not set the pace; a run with backups is not bit-reproducible. Less than "
          "num_workers; needs cluster.servers = 1.",
          within(0, max_workers - 1)),
      key("host", &S::host, "Address the parameter server listens on and workers connect to."),
      key("port", &S::port, "TCP port of the parameter server; 0 picks a free port.", within(0, 65535)),
      key("heartbeat_ms", &S::heartbeat_ms,
          "Milliseconds between heartbeats that tell the server a worker is alive; 0 disables them.",
          milliseconds_from(0)),
      key("connection_timeout_ms", &S::connection_timeout_ms,
          "Milliseconds without any traffic (heartbeats included) after which a peer counts as dead; 0 never.",
          milliseconds_from(0)),
      key("request_timeout_ms", &S::request_timeout_ms,
          "Milliseconds to wait for a reply to a request; a worker that takes longer is dropped, and a worker "
          "whose server owes it an answer for longer (three times longer in sync) stops naming that server.",
          milliseconds_from(1)),
      key("pipeline", &S::pipeline,
          "A worker computes its next gradient while the last one is on its way, from the newest weights it "
          "has: one more step of staleness. Async/ssp: two pushes out per worker. Sync: each step sums every "
          "worker's gradient from the weights one step older than its own (from its own after each "
          "evaluation or checkpoint, where the pipeline drains), so the server's link need not idle while "
          "the last gradient of a step comes in; still the same weights run after run, on one server or "
          "several. Sync needs no backup workers."),
      key("ordered_answers", &S::ordered_answers,
          "Sync: a server answers the pushes of a step one after another (each of K shards K at a time), "
          "the next once the one before has left the server's sockets for the wire, or the worker says it "
          "has its weights (or after a second without either), instead of all at once over one shared "
          "link; the first workers then compute and push while later answers are on the wire. For workers "
          "on other hosts; local and same-host workers are answered at once."),
      key("shared_memory", &S::shared_memory,
          "Processes on one host (same boot, user and network namespace) pass gradients and weights through "
          "shared memory instead of their TCP connection, which carries only a reference; off: always the "
          "connection."),
      key("elastic", &S::elastic,
          "Let workers join a running job (from the next iteration); num_workers is then the minimum to start."),
      key("rejoin_timeout_ms", &S::rejoin_timeout_ms,
          "When every worker is lost: how long an elastic job waits for a new one before giving up.",
          milliseconds_from(0)),
      key("join_timeout_ms", &S::join_timeout_ms,
          "How long `psgrad serve` waits for its workers (and shard processes) to join before giving up, "
          "saying how many joined and how many were refused; 0 waits forever.",
          milliseconds_from(0)),
      key("join_token", &S::join_token,
          "Secret a worker must present to join; empty admits any worker that can connect."),
      key("worker_delay_ms", &S::worker_delay_ms,
          "Extra milliseconds every worker spends per gradient (to simulate slower machines).",
          milliseconds_from(0)),
      key("straggler_delay_ms", &S::straggler_delay_ms,
          "Extra milliseconds the last worker spends per gradient (to simulate one straggler).",
          milliseconds_from(0)),
      key("tls_certificate", &S::tls_certificate,
          "Server's PEM certificate; setting the TLS keys switches connections to TLS."),
      key("tls_key", &S::tls_key, "Server's PEM private key."),
      key("tls_ca", &S::tls_ca,
          "PEM CA certificate that workers' certificates must be signed by; workers without one are refused."),
  }};
  return table;
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

// [optimizer.learn_rate] with "@schedules": a registered schedule with Thinc's parameter names.
Status read_schedule(const toml::table& schedule_table, const Validator& validator, OptimizerSection& out) {
  const std::string path = "optimizer.learn_rate";
  auto chosen = validator.read_registry_name(&schedule_table, path, kSchedulesKey, "schedule", schedule_names(), "");
  if (!chosen) return Error{chosen.error()};
  const auto entry = find_schedule(*chosen);
  auto read = validator.read_settings(&schedule_table, path, entry->settings, {kSchedulesKey}, *chosen);
  if (!read) return Error{read.error()};
  auto schedule = build_schedule(*chosen, *read);
  if (!schedule) return validator.fail(path, schedule.error());
  out.schedule = *chosen;
  out.schedule_settings = std::move(*read);
  // Thinc's optimizer takes its learn_rate from the schedule's first value; so does the setting here.
  out.settings["learn_rate"] = SettingValue{(*schedule)->at(0)};
  return success();
}

// [optimizer]: the registered optimizer's settings, where learn_rate may instead be a schedule table.
Status read_optimizer(const toml::table& document, const Validator& validator, OptimizerSection& out,
                      std::vector<std::string>& notes) {
  const auto* section = document.get_as<toml::table>(optimizer_section.name);
  const toml::table* schedule_table = section ? section->get_as<toml::table>("learn_rate") : nullptr;
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
  if (read)
    read = read_section(document, validator, model_section, ModelSection{}.architecture, config.model.architecture,
                        config.model.settings, config.notes);
  if (read) read = read_optimizer(document, validator, config.optimizer, config.notes);
  if (read) read = read_section(document, validator, data_table(), config.data);
  if (read) read = read_section(document, validator, cluster_table(), config.cluster);
  if (!read) return Error{read.error()};
  // A step needs at least one gradient.
  if (config.cluster.backup_workers >= config.cluster.num_workers)
    return validator.fail("cluster.backup_workers",
                          fmt::format("expected fewer than cluster.num_workers ({}), got {}",
                                      config.cluster.num_workers, config.cluster.backup_workers));
  // Shards each take a sync step's first gradients to arrive, which need not be the same ones.
  if (config.cluster.mode == "sync" && config.cluster.backup_workers > 0 && config.cluster.servers > 1)
    return validator.fail("cluster.backup_workers",
                          fmt::format("sync backup workers need one server, but cluster.servers is {}: each shard "
                                      "would sum the first gradients to reach it",
                                      config.cluster.servers));
  if (config.cluster.mode == "sync" && config.cluster.pipeline && config.cluster.backup_workers > 0)
    return validator.fail("cluster.pipeline",
                          fmt::format("sync with the pipeline takes every worker's gradient in each step, but "
                                      "cluster.backup_workers is {}",
                                      config.cluster.backup_workers));
  return config;
}

// Writes settings in spec order, filling defaults for any the caller left out, then any settings no
// spec knows (so nothing is silently dropped; parsing will name them).
void render_settings(std::ostringstream& out, const std::vector<SettingSpec>& specs, const Settings& settings) {
  for (const auto& spec : specs) {
    auto it = settings.find(spec.name);
    if (it != settings.end()) out << toml_key(spec.name) << " = " << toml_text(it->second) << "\n";
    else if (spec.default_value) out << toml_key(spec.name) << " = " << toml_text(*spec.default_value) << "\n";
  }
  for (const auto& [name, value] : settings) {
    const bool specified = std::any_of(specs.begin(), specs.end(), [&](const SettingSpec& s) { return s.name == name; });
    if (!specified) out << toml_key(name) << " = " << toml_text(value) << "\n";
  }
}

template <class Section>
void render_section(std::ostringstream& out, const SectionTable<Section>& table, const Section& section) {
  out << "[" << table.name() << "]\n";
  render_settings(out, table.specs(), table.values(section));
}

void render_section(std::ostringstream& out, const RegistrySection& registry, const std::string& name,
                    const Settings& settings) {
  out << "[" << registry.name << "]\n" << toml_string(registry.name_key) << " = " << toml_string(name) << "\n";
  const auto specs = registry.settings_of(name);
  render_settings(out, specs ? *specs : std::vector<SettingSpec>{}, settings);
}

// With a schedule, learn_rate is written as the [optimizer.learn_rate] table (after the section's own
// keys, as TOML requires), not as the number it starts at.
void render_optimizer(std::ostringstream& out, const OptimizerSection& optimizer) {
  if (optimizer.schedule.empty()) return render_section(out, optimizer_section, optimizer.name, optimizer.settings);
  Settings settings = optimizer.settings;
  settings.erase("learn_rate");
  const auto registered = optimizer_section.settings_of(optimizer.name);
  auto specs = registered ? *registered : std::vector<SettingSpec>{};
  specs.erase(std::remove_if(specs.begin(), specs.end(), [](const SettingSpec& s) { return s.name == "learn_rate"; }),
              specs.end());
  out << "[" << optimizer_section.name << "]\n"
      << toml_string(optimizer_section.name_key) << " = " << toml_string(optimizer.name) << "\n";
  render_settings(out, specs, settings);
  out << "\n[optimizer.learn_rate]\n" << toml_string(kSchedulesKey) << " = " << toml_string(optimizer.schedule) << "\n";
  const auto entry = find_schedule(optimizer.schedule);
  render_settings(out, entry ? entry->settings : std::vector<SettingSpec>{}, optimizer.schedule_settings);
}

}  // namespace

const std::vector<SettingSpec>& training_settings() { return training_table().specs(); }
const std::vector<SettingSpec>& evaluation_settings() { return evaluation_table().specs(); }
const std::vector<SettingSpec>& data_settings() { return data_table().specs(); }
const std::vector<SettingSpec>& cluster_settings() { return cluster_table().specs(); }

Result<Config> parse_config(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides) {
  toml::table document;
  try {
    document = toml::parse(std::string_view(text), std::string_view(source));
  } catch (const toml::parse_error& error) {
    const auto& begin = error.source().begin;
    return Error{fmt::format("{}:{}:{}: {}", source, begin.line, begin.column, error.description())};
  }
  OverrideRecord record;
  if (auto applied = apply_overrides(document, overrides, source, record); !applied)
    return Error{applied.error()};
  // The registry and validation code report problems as values; anything thrown past here would be a
  // bug, but callers are promised no exceptions, so turn it into a message.
  try {
    return validate(document, Validator(source, std::move(record)));
  } catch (const std::exception& error) {
    return Error{source + ": internal error while validating the config: " + error.what()};
  }
}

Result<Config> load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return Error{path + ": cannot open config file"};
  auto text = read_checked_file(path, "config file", kMaxConfigBytes);
  if (!text) return Error{text.error()};
  return parse_config(*text, path, overrides);
}

std::string render_config(const Config& config) {
  std::ostringstream out;
  render_section(out, training_table(), config.training);
  out << "\n";
  render_section(out, evaluation_table(), config.evaluation);
  out << "\n";
  render_section(out, model_section, config.model.architecture, config.model.settings);
  out << "\n";
  render_optimizer(out, config.optimizer);
  out << "\n";
  render_section(out, data_table(), config.data);
  out << "\n";
  render_section(out, cluster_table(), config.cluster);
  return out.str();
}

}  // namespace psgrad
