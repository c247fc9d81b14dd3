// Parses, overrides, validates and renders the TOML training configuration.
#include "io/config.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "io/config_validator.hpp"
#include "io/toml_text.hpp"
#include "model/registry.hpp"

namespace psgrad {

namespace {

constexpr const char* kLayersKey = "@layers";
constexpr const char* kOptimizersKey = "@optimizers";

// In the order they are validated and rendered.
const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = {"training", "evaluation", "model",
                                                 "optimizer", "data",       "cluster"};
  return names;
}

SettingSpec integer_spec(std::string name, std::int64_t default_value, std::string description,
                         std::optional<double> minimum, std::optional<double> maximum = std::nullopt) {
  SettingSpec spec;
  spec.name = std::move(name);
  spec.kind = SettingKind::integer;
  spec.default_value = SettingValue{default_value};
  spec.description = std::move(description);
  spec.minimum = minimum;
  spec.maximum = maximum;
  return spec;
}

SettingSpec text_spec(std::string name, std::string default_value, std::string description,
                      std::vector<std::string> choices = {}) {
  SettingSpec spec;
  spec.name = std::move(name);
  spec.kind = SettingKind::text;
  spec.default_value = SettingValue{std::move(default_value)};
  spec.description = std::move(description);
  spec.choices = std::move(choices);
  return spec;
}

SettingSpec boolean_spec(std::string name, bool default_value, std::string description) {
  SettingSpec spec;
  spec.name = std::move(name);
  spec.kind = SettingKind::boolean;
  spec.default_value = SettingValue{default_value};
  spec.description = std::move(description);
  return spec;
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
  auto section = [&](const char* name) { return document.get_as<toml::table>(name); };

  Config config;
  config.source = validator.source();

  auto training = validator.read_settings(section("training"), "training", training_settings(), {}, "");
  if (!training) return Error{training.error()};
  config.training.iterations = get_integer(*training, "iterations");
  config.training.batch_size = get_integer(*training, "batch_size");
  config.training.seed = static_cast<std::uint64_t>(get_integer(*training, "seed"));  // checked >= 0
  config.training.checkpoint_every = get_integer(*training, "checkpoint_every");
  config.training.checkpoint_path = get_text(*training, "checkpoint_path");

  auto evaluation = validator.read_settings(section("evaluation"), "evaluation", evaluation_settings(), {}, "");
  if (!evaluation) return Error{evaluation.error()};
  config.evaluation.batch_size = get_integer(*evaluation, "batch_size");
  config.evaluation.frequency = get_integer(*evaluation, "frequency");

  auto architecture = validator.read_registry_name(section("model"), "model", kLayersKey, "architecture",
                                                   architecture_names(), ModelSection{}.architecture);
  if (!architecture) return Error{architecture.error()};
  const auto* architecture_entry = find_architecture(*architecture);
  if (!architecture_entry)  // the default itself is not registered: a build problem, still an error value
    return Error{validator.source() + ": model." + kLayersKey + ": architecture \"" + *architecture +
                 "\" is not registered"};
  auto model = validator.read_settings(section("model"), "model", architecture_entry->settings, {kLayersKey},
                                       *architecture);
  if (!model) return Error{model.error()};
  config.model.architecture = *architecture;
  config.model.settings = std::move(*model);

  auto optimizer_name = validator.read_registry_name(section("optimizer"), "optimizer", kOptimizersKey,
                                                     "optimizer", optimizer_names(), OptimizerSection{}.name);
  if (!optimizer_name) return Error{optimizer_name.error()};
  const auto* optimizer_entry = find_optimizer(*optimizer_name);
  if (!optimizer_entry)
    return Error{validator.source() + ": optimizer." + kOptimizersKey + ": optimizer \"" + *optimizer_name +
                 "\" is not registered"};
  auto optimizer = validator.read_settings(section("optimizer"), "optimizer", optimizer_entry->settings,
                                           {kOptimizersKey}, *optimizer_name);
  if (!optimizer) return Error{optimizer.error()};
  config.optimizer.name = *optimizer_name;
  config.optimizer.settings = std::move(*optimizer);

  auto data = validator.read_settings(section("data"), "data", data_settings(), {}, "");
  if (!data) return Error{data.error()};
  config.data.name = get_text(*data, "name");
  config.data.path = get_text(*data, "path");

  auto cluster = validator.read_settings(section("cluster"), "cluster", cluster_settings(), {}, "");
  if (!cluster) return Error{cluster.error()};
  config.cluster.num_workers = get_integer(*cluster, "num_workers");
  config.cluster.threads = get_integer(*cluster, "threads");
  config.cluster.mode = get_text(*cluster, "mode");
  config.cluster.staleness = get_integer(*cluster, "staleness");
  config.cluster.servers = get_integer(*cluster, "servers");
  config.cluster.host = get_text(*cluster, "host");
  config.cluster.port = get_integer(*cluster, "port");
  config.cluster.heartbeat_ms = get_integer(*cluster, "heartbeat_ms");
  config.cluster.connection_timeout_ms = get_integer(*cluster, "connection_timeout_ms");
  config.cluster.request_timeout_ms = get_integer(*cluster, "request_timeout_ms");
  config.cluster.elastic = get_boolean(*cluster, "elastic");
  config.cluster.rejoin_timeout_ms = get_integer(*cluster, "rejoin_timeout_ms");
  config.cluster.join_token = get_text(*cluster, "join_token");
  config.cluster.worker_delay_ms = get_integer(*cluster, "worker_delay_ms");
  config.cluster.straggler_delay_ms = get_integer(*cluster, "straggler_delay_ms");
  config.cluster.tls_certificate = get_text(*cluster, "tls_certificate");
  config.cluster.tls_key = get_text(*cluster, "tls_key");
  config.cluster.tls_ca = get_text(*cluster, "tls_ca");
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

}  // namespace

const std::vector<SettingSpec>& training_settings() {
  static const std::vector<SettingSpec> specs = [] {
    const TrainingSection defaults;
    return std::vector<SettingSpec>{
        integer_spec("iterations", defaults.iterations,
                     "Number of training steps; each one gathers gradients from the workers and updates the "
                     "weights.",
                     1),
        integer_spec("batch_size", defaults.batch_size,
                     "Number of training examples in each minibatch a worker computes gradients on.", 1),
        integer_spec("seed", static_cast<std::int64_t>(defaults.seed),
                     "Random seed for weight initialisation, shuffling and dropout, so runs can be repeated.", 0),
        integer_spec("checkpoint_every", defaults.checkpoint_every,
                     "Save a checkpoint every this many iterations; 0 saves only at the end.", 0),
        text_spec("checkpoint_path", defaults.checkpoint_path,
                  "File the weights are checkpointed to; empty disables checkpoints."),
    };
  }();
  return specs;
}

const std::vector<SettingSpec>& evaluation_settings() {
  static const std::vector<SettingSpec> specs = [] {
    const EvaluationSection defaults;
    return std::vector<SettingSpec>{
        integer_spec("batch_size", defaults.batch_size,
                     "Number of dev-set examples scored per forward pass during evaluation.", 1),
        integer_spec("frequency", defaults.frequency,
                     "Evaluate accuracy on the dev set every this many iterations.", 1),
    };
  }();
  return specs;
}

const std::vector<SettingSpec>& data_settings() {
  static const std::vector<SettingSpec> specs = [] {
    const DataSection defaults;
    return std::vector<SettingSpec>{
        text_spec("name", defaults.name, "Named data set to train on, used when path is empty.",
                  {"mnist", "fashion-mnist"}),
        text_spec("path", defaults.path,
                  "Folder of IDX files to train on instead of the named data set; empty uses name."),
    };
  }();
  return specs;
}

const std::vector<SettingSpec>& cluster_settings() {
  static const std::vector<SettingSpec> specs = [] {
    const ClusterSection defaults;
    return std::vector<SettingSpec>{
        integer_spec("num_workers", defaults.num_workers,
                     "Number of workers that compute gradients in parallel.", 1),
        integer_spec("threads", defaults.threads,
                     "Scheduler threads for the actor system; 0 uses one per machine core.", 0),
        text_spec("mode", defaults.mode,
                  "sync waits for every worker's gradients each step; async applies each as it arrives.",
                  {"sync", "async", "ssp"}),
        integer_spec("servers", defaults.servers,
                     "Parameter-server shards: the weights are split on array boundaries, each shard with its own optimizer.",
                     1, 64),
        integer_spec("staleness", defaults.staleness,
                     "ssp mode: how many gradients a worker may get ahead of the slowest one (0 is lock-step).", 0),
        text_spec("host", defaults.host, "Address the parameter server listens on and workers connect to."),
        integer_spec("port", defaults.port, "TCP port of the parameter server; 0 picks a free port.", 0, 65535),
        integer_spec("heartbeat_ms", defaults.heartbeat_ms,
                     "Milliseconds between heartbeats that tell the server a worker is alive; 0 disables them.",
                     0),
        integer_spec("connection_timeout_ms", defaults.connection_timeout_ms,
                     "Milliseconds without any traffic (heartbeats included) after which a peer counts as dead; 0 never.",
                     0),
        integer_spec("request_timeout_ms", defaults.request_timeout_ms,
                     "Milliseconds to wait for a reply to a request; a worker that takes longer is dropped.", 1),
        boolean_spec("elastic", defaults.elastic,
                     "Let workers join a running job (from the next iteration); num_workers is then the minimum to start."),
        integer_spec("rejoin_timeout_ms", defaults.rejoin_timeout_ms,
                     "When every worker is lost: how long an elastic job waits for a new one before giving up.", 0),
        text_spec("join_token", defaults.join_token,
                  "Secret a worker must present to join; empty admits any worker that can connect."),
        integer_spec("worker_delay_ms", defaults.worker_delay_ms,
                     "Extra milliseconds every worker spends per gradient (to simulate slower machines).", 0),
        integer_spec("straggler_delay_ms", defaults.straggler_delay_ms,
                     "Extra milliseconds the last worker spends per gradient (to simulate one straggler).", 0),
        text_spec("tls_certificate", defaults.tls_certificate,
                  "Server's PEM certificate; setting the TLS keys switches connections to TLS."),
        text_spec("tls_key", defaults.tls_key, "Server's PEM private key."),
        text_spec("tls_ca", defaults.tls_ca,
                  "PEM CA certificate that workers' certificates must be signed by; workers without one are refused."),
    };
  }();
  return specs;
}

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
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{path + ": cannot open config file"};
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return Error{path + ": cannot open config file"};
  return parse_config(text.str(), path, overrides);
}

std::string render_config(const Config& config) {
  std::ostringstream out;
  const auto& training = config.training;
  out << "[training]\n";
  render_settings(out, training_settings(),
                  {{"iterations", training.iterations},
                   {"batch_size", training.batch_size},
                   {"seed", static_cast<std::int64_t>(training.seed)},
                   {"checkpoint_every", training.checkpoint_every},
                   {"checkpoint_path", training.checkpoint_path}});

  out << "\n[evaluation]\n";
  render_settings(out, evaluation_settings(),
                  {{"batch_size", config.evaluation.batch_size}, {"frequency", config.evaluation.frequency}});

  out << "\n[model]\n" << toml_string(kLayersKey) << " = " << toml_string(config.model.architecture) << "\n";
  const auto* architecture = find_architecture(config.model.architecture);
  render_settings(out, architecture ? architecture->settings : std::vector<SettingSpec>{}, config.model.settings);

  out << "\n[optimizer]\n" << toml_string(kOptimizersKey) << " = " << toml_string(config.optimizer.name) << "\n";
  const auto* optimizer = find_optimizer(config.optimizer.name);
  render_settings(out, optimizer ? optimizer->settings : std::vector<SettingSpec>{}, config.optimizer.settings);

  out << "\n[data]\n";
  render_settings(out, data_settings(), {{"name", config.data.name}, {"path", config.data.path}});

  const auto& cluster = config.cluster;
  out << "\n[cluster]\n";
  render_settings(out, cluster_settings(),
                  {{"num_workers", cluster.num_workers},
                   {"threads", cluster.threads},
                   {"mode", cluster.mode},
                   {"servers", cluster.servers},
                   {"staleness", cluster.staleness},
                   {"host", cluster.host},
                   {"port", cluster.port},
                   {"heartbeat_ms", cluster.heartbeat_ms},
                   {"connection_timeout_ms", cluster.connection_timeout_ms},
                   {"request_timeout_ms", cluster.request_timeout_ms},
                   {"elastic", cluster.elastic},
                   {"rejoin_timeout_ms", cluster.rejoin_timeout_ms},
                   {"join_token", cluster.join_token},
                   {"worker_delay_ms", cluster.worker_delay_ms},
                   {"straggler_delay_ms", cluster.straggler_delay_ms},
                   {"tls_certificate", cluster.tls_certificate},
                   {"tls_key", cluster.tls_key},
                   {"tls_ca", cluster.tls_ca}});
  return out.str();
}

}  // namespace psgrad
