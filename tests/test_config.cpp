// Tests for the TOML config: defaults, every error class, --set overrides and render round trips.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/config.hpp"

using namespace psgrad;

namespace {

const std::string kConfigsDir = std::string(PSGRAD_SOURCE_DIR) + "/configs";

Config parse_ok(const std::string& text, const std::vector<std::string>& overrides = {}) {
  auto config = parse_config(text, "test.toml", overrides);
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  return *config;
}

// The error message, after checking there was one and that it is a single line naming the source.
std::string parse_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  auto config = parse_config(text, "test.toml", overrides);
  REQUIRE_FALSE(config.ok());
  const auto& message = config.error();
  INFO("message: " << message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.rfind("test.toml", 0) == 0);
  return message;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void check_same_config(const Config& a, const Config& b) {
  CHECK(a.training.iterations == b.training.iterations);
  CHECK(a.training.batch_size == b.training.batch_size);
  CHECK(a.training.seed == b.training.seed);
  CHECK(a.training.checkpoint_every == b.training.checkpoint_every);
  CHECK(a.training.checkpoint_path == b.training.checkpoint_path);
  CHECK(a.evaluation.batch_size == b.evaluation.batch_size);
  CHECK(a.evaluation.frequency == b.evaluation.frequency);
  CHECK(a.model.architecture == b.model.architecture);
  CHECK(a.model.settings == b.model.settings);
  CHECK(a.optimizer.name == b.optimizer.name);
  CHECK(a.optimizer.settings == b.optimizer.settings);
  CHECK(a.optimizer.schedule == b.optimizer.schedule);
  CHECK(a.optimizer.schedule_settings == b.optimizer.schedule_settings);
  CHECK(a.data.name == b.data.name);
  CHECK(a.data.path == b.data.path);
  CHECK(a.cluster.num_workers == b.cluster.num_workers);
  CHECK(a.cluster.threads == b.cluster.threads);
  CHECK(a.cluster.mode == b.cluster.mode);
  CHECK(a.cluster.host == b.cluster.host);
  CHECK(a.cluster.port == b.cluster.port);
  CHECK(a.cluster.heartbeat == b.cluster.heartbeat);
  CHECK(a.cluster.connection_timeout == b.cluster.connection_timeout);
  CHECK(a.cluster.server_wait == b.cluster.server_wait);
  CHECK(a.cluster.request_timeout == b.cluster.request_timeout);
}

void check_round_trip(const Config& config) {
  const auto text = render_config(config);
  INFO("rendered:\n" << text);
  auto reparsed = parse_config(text, config.source);
  INFO("error: " << (reparsed ? std::string() : reparsed.error()));
  REQUIRE(reparsed.ok());
  check_same_config(*reparsed, config);
  CHECK(render_config(*reparsed) == text);
}

void check_tutorial_experiment(const Config& config, const std::string& data_name) {
  CHECK(config.training.iterations == 200);
  CHECK(config.training.batch_size == 128);
  CHECK(config.training.seed == 0);
  CHECK(config.evaluation.batch_size == 256);
  CHECK(config.evaluation.frequency == 10);
  CHECK(config.model.architecture == "relu_relu_softmax.v1");
  CHECK(get_integer(config.model.settings, "hidden_width") == 128);
  CHECK(get_number(config.model.settings, "dropout") == 0.2);
  CHECK(config.optimizer.name == "Adam.v1");
  CHECK(get_number(config.optimizer.settings, "learn_rate") == 0.001);
  CHECK(get_number(config.optimizer.settings, "beta1") == 0.9);
  CHECK(get_number(config.optimizer.settings, "beta2") == 0.999);
  CHECK(get_number(config.optimizer.settings, "eps") == 1e-8);
  CHECK(get_number(config.optimizer.settings, "L2") == 0.0);
  CHECK(get_number(config.optimizer.settings, "grad_clip") == 1.0);
  CHECK(get_boolean(config.optimizer.settings, "L2_is_weight_decay") == true);
  CHECK(get_boolean(config.optimizer.settings, "use_averages") == true);  // Thinc's default, written out
  CHECK(config.data.name == data_name);
  CHECK(config.data.path.empty());
  CHECK(config.cluster.num_workers == 2);
  CHECK(config.cluster.threads == 0);
  CHECK(config.cluster.mode == TrainingMode::sync);
}

}  // namespace

TEST_CASE("config uses the struct defaults and the default architecture and optimizer when sections are absent") {
  const auto config = parse_ok("");
  CHECK(config.source == "test.toml");
  const TrainingSection training;
  CHECK(config.training.iterations == training.iterations);
  CHECK(config.training.batch_size == training.batch_size);
  CHECK(config.training.seed == training.seed);
  CHECK(config.training.checkpoint_every == training.checkpoint_every);
  CHECK(config.training.checkpoint_path == training.checkpoint_path);
  const EvaluationSection evaluation;
  CHECK(config.evaluation.batch_size == evaluation.batch_size);
  CHECK(config.evaluation.frequency == evaluation.frequency);
  const DataSection data;
  CHECK(config.data.name == data.name);
  CHECK(config.data.path == data.path);
  const ClusterSection cluster;
  CHECK(config.cluster.num_workers == cluster.num_workers);
  CHECK(config.cluster.threads == cluster.threads);
  CHECK(config.cluster.mode == cluster.mode);
  CHECK(config.cluster.host == cluster.host);
  CHECK(config.cluster.port == cluster.port);
  CHECK(config.cluster.heartbeat == cluster.heartbeat);
  CHECK(config.cluster.connection_timeout == cluster.connection_timeout);
  CHECK(config.cluster.server_wait == cluster.server_wait);
  CHECK(config.cluster.request_timeout == cluster.request_timeout);

  CHECK(config.model.architecture == "relu_relu_softmax.v1");
  CHECK(get_integer(config.model.settings, "hidden_width") == 128);
  CHECK(get_number(config.model.settings, "dropout") == 0.2);
  CHECK(config.optimizer.name == "Adam.v1");
  CHECK(get_number(config.optimizer.settings, "learn_rate") == 0.001);
  CHECK(get_number(config.optimizer.settings, "grad_clip") == 1.0);
  CHECK(get_boolean(config.optimizer.settings, "use_averages") == true);  // Thinc's default
}

TEST_CASE("config fills the chosen architecture's defaults for keys the section leaves out") {
  const auto config = parse_ok("[model]\n\"@layers\" = \"mlp.v1\"\ndropout = 0.5\n");
  CHECK(config.model.architecture == "mlp.v1");
  CHECK(get_integer_list(config.model.settings, "widths") == std::vector<std::int64_t>{128, 128});
  CHECK(get_text(config.model.settings, "activation") == "relu");
  CHECK(get_number(config.model.settings, "dropout") == 0.5);
}

TEST_CASE("config fixed-section settings all have descriptions") {
  for (const auto* specs : {&training_settings(), &evaluation_settings(), &data_settings(), &cluster_settings()}) {
    for (const auto& spec : *specs) {
      INFO(spec.name);
      CHECK_FALSE(spec.description.empty());
      CHECK(spec.default_value.has_value());
    }
  }
}

TEST_CASE("config rejects an unknown section listing the known ones") {
  const auto message = parse_error("[trainig]\niterations = 3\n");
  CHECK(contains(message, "trainig"));
  CHECK(contains(message, "unknown section"));
  CHECK(contains(message, "training, evaluation, model, optimizer, tables, data, cluster"));
}

TEST_CASE("config rejects a top-level key outside any section") {
  const auto message = parse_error("iterations = 3\n");
  CHECK(contains(message, "iterations"));
  CHECK(contains(message, "training"));
}

TEST_CASE("config rejects an unknown key naming the key path and the section's known keys") {
  const auto message = parse_error("[training]\nbatchsize = 3\n");
  CHECK(contains(message, "training.batchsize"));
  CHECK(contains(message, "unknown key"));
  CHECK(contains(message, "iterations, batch_size, seed, checkpoint_every, checkpoint_path"));

  const auto model_message = parse_error("[model]\n\"@layers\" = \"relu_relu_softmax.v1\"\nwidths = [3]\n");
  CHECK(contains(model_message, "model.widths"));
  CHECK(contains(model_message, "@layers"));
  CHECK(contains(model_message, "hidden_width"));
}

TEST_CASE("config rejects a value of the wrong type saying what was expected") {
  const auto text_for_integer = parse_error("[training]\nbatch_size = \"big\"\n");
  CHECK(contains(text_for_integer, "training.batch_size"));
  CHECK(contains(text_for_integer, "expected an integer >= 1"));
  CHECK(contains(text_for_integer, "got \"big\""));

  const auto float_for_integer = parse_error("[evaluation]\nfrequency = 2.5\n");
  CHECK(contains(float_for_integer, "evaluation.frequency"));
  CHECK(contains(float_for_integer, "got 2.5"));

  const auto table_for_number =
      parse_error("[model]\n\"@layers\" = \"relu_relu_softmax.v1\"\n[model.dropout]\nrate = 0.1\n");
  CHECK(contains(table_for_number, "model.dropout"));
  CHECK(contains(table_for_number, "expected a number in [0, 1)"));
  CHECK(contains(table_for_number, "got a table"));

  const auto strings_for_widths = parse_error("[model]\n\"@layers\" = \"mlp.v1\"\nwidths = [\"wide\"]\n");
  CHECK(contains(strings_for_widths, "model.widths"));
  CHECK(contains(strings_for_widths, "expected an array of integers"));
  CHECK(contains(strings_for_widths, "got an array of strings"));

  const auto text_for_boolean = parse_error("[optimizer]\n\"@optimizers\" = \"Adam.v1\"\nuse_averages = \"yes\"\n");
  CHECK(contains(text_for_boolean, "optimizer.use_averages"));
  CHECK(contains(text_for_boolean, "expected a boolean"));
}

TEST_CASE("config rejects batch_size 0 naming the key") {
  const auto message = parse_error("[training]\nbatch_size = 0\n");
  CHECK(contains(message, "training.batch_size"));
  CHECK(contains(message, "expected an integer >= 1, got 0"));
}

TEST_CASE("config rejects dropout 1.0 naming the half-open range") {
  const auto message = parse_error("[model]\n\"@layers\" = \"relu_relu_softmax.v1\"\ndropout = 1.0\n");
  CHECK(contains(message, "model.dropout"));
  CHECK(contains(message, "expected a number in [0, 1), got 1.0"));
}

TEST_CASE("config rejects a negative learn_rate") {
  const auto message = parse_error("[optimizer]\n\"@optimizers\" = \"Adam.v1\"\nlearn_rate = -0.001\n");
  CHECK(contains(message, "optimizer.learn_rate"));
  CHECK(contains(message, "expected a number > 0"));
  CHECK(contains(message, "got -0.001"));
}

TEST_CASE("config rejects a negative seed and out-of-range port") {
  const auto seed = parse_error("[training]\nseed = -1\n");
  CHECK(contains(seed, "training.seed"));
  CHECK(contains(seed, "expected an integer >= 0, got -1"));
  const auto port = parse_error("[cluster]\nport = 70000\n");
  CHECK(contains(port, "cluster.port"));
  CHECK(contains(port, "[0, 65535]"));
}

TEST_CASE("config accepts the largest seed TOML can write") {
  const auto config = parse_ok("[training]\nseed = 9223372036854775807\n");
  CHECK(config.training.seed == 9223372036854775807ull);
}

TEST_CASE("config rejects text outside a setting's choices") {
  const auto message = parse_error("[cluster]\nmode = \"eventual\"\n");
  CHECK(contains(message, "cluster.mode"));
  CHECK(contains(message, "one of \"sync\", \"async\""));
  CHECK(contains(message, "got \"eventual\""));
}

TEST_CASE("config reports SGD's learn_rate as missing and required") {
  const auto message = parse_error("[optimizer]\n\"@optimizers\" = \"SGD.v1\"\n");
  CHECK(contains(message, "optimizer.learn_rate"));
  CHECK(contains(message, "missing required"));
  CHECK(contains(message, "SGD.v1"));
  CHECK(contains(message, "expected a number > 0"));

  const auto config = parse_ok("[optimizer]\n\"@optimizers\" = \"SGD.v1\"\nlearn_rate = 0.1\n");
  CHECK(config.optimizer.name == "SGD.v1");
  CHECK(get_number(config.optimizer.settings, "learn_rate") == 0.1);
}

TEST_CASE("config rejects an unknown @layers name listing the registered architectures") {
  const auto message = parse_error("[model]\n\"@layers\" = \"transformer.v9\"\n");
  CHECK(contains(message, "model.@layers"));
  CHECK(contains(message, "\"transformer.v9\""));
  CHECK(contains(message, "\"relu_relu_softmax.v1\""));
  CHECK(contains(message, "\"mlp.v1\""));
}

TEST_CASE("config rejects an unknown @optimizers name listing the registered optimizers") {
  const auto message = parse_error("[optimizer]\n\"@optimizers\" = \"Lion.v1\"\n");
  CHECK(contains(message, "optimizer.@optimizers"));
  CHECK(contains(message, "\"Lion.v1\""));
  CHECK(contains(message, "\"Adam.v1\""));
  CHECK(contains(message, "\"SGD.v1\""));
}

TEST_CASE("config requires @layers when a [model] section is present") {
  const auto message = parse_error("[model]\nhidden_width = 64\n");
  CHECK(contains(message, "model.@layers"));
  CHECK(contains(message, "missing"));
  CHECK(contains(message, "\"relu_relu_softmax.v1\""));

  const auto wrong_type = parse_error("[optimizer]\n\"@optimizers\" = 3\n");
  CHECK(contains(wrong_type, "optimizer.@optimizers"));
  CHECK(contains(wrong_type, "got 3"));
}

TEST_CASE("config reports a TOML syntax error with source, line and column") {
  auto config = parse_config("[training]\niterations = 3\nbatch_size = = 4\n", "broken.toml");
  REQUIRE_FALSE(config.ok());
  INFO(config.error());
  CHECK(config.error().rfind("broken.toml:3:", 0) == 0);
  CHECK(config.error().find('\n') == std::string::npos);
}

TEST_CASE("config reports a missing file as unopenable") {
  const std::string path = "/nonexistent/psgrad/missing.toml";
  auto config = load_config(path);
  REQUIRE_FALSE(config.ok());
  CHECK(config.error() == path + ": cannot open config file");

  auto folder = load_config(kConfigsDir);
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.error() == kConfigsDir + ": cannot open config file");
}

TEST_CASE("config accepts an integer for a number setting and stores it as a double") {
  const auto config = parse_ok("[optimizer]\n\"@optimizers\" = \"SGD.v1\"\nlearn_rate = 1\n");
  const auto& value = config.optimizer.settings.at("learn_rate");
  REQUIRE(std::holds_alternative<double>(value));
  CHECK(std::get<double>(value) == 1.0);
}

TEST_CASE("config override sets an integer") {
  const auto config = parse_ok("[training]\nbatch_size = 32\n", {"training.batch_size=64"});
  CHECK(config.training.batch_size == 64);
}

TEST_CASE("config override sets a float") {
  const auto config = parse_ok("", {"optimizer.learn_rate=0.01", "model.dropout = 0.5"});
  CHECK(get_number(config.optimizer.settings, "learn_rate") == 0.01);
  CHECK(get_number(config.model.settings, "dropout") == 0.5);
}

TEST_CASE("config override takes a bare word or path as a string") {
  const auto config = parse_ok("", {"cluster.mode=async", "data.path=/tmp/my data/mnist", "cluster.host=\"::1\""});
  CHECK(config.cluster.mode == TrainingMode::async);
  CHECK(config.data.path == "/tmp/my data/mnist");
  CHECK(config.cluster.host == "::1");
}

TEST_CASE("a command-line flag sets its key typed, after --set, and a refusal names the flag") {
  const std::vector<FlagSetting> flags{{"--workers", "cluster.num_workers", SettingValue{std::int64_t{5}}},
                                       {"--mode", "cluster.mode", SettingValue{std::string("ssp")}}};
  const auto config = parse_config("[cluster]\nnum_workers = 3\n", "test.toml", {"cluster.num_workers=4"}, flags);
  REQUIRE(config.ok());
  CHECK(config->cluster.num_workers == 5);
  CHECK(config->cluster.mode == TrainingMode::ssp);
  // A value a shell would have to quote in TOML goes in as it is.
  const auto host = parse_config("", "test.toml", {}, {{"--bind", "cluster.host", SettingValue{std::string("a\"b")}}});
  REQUIRE(host.ok());
  CHECK(host->cluster.host == "a\"b");
  const auto refused =
      parse_config("", "test.toml", {}, {{"--mode", "cluster.mode", SettingValue{std::string("fast")}}});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().find("cluster.mode") != std::string::npos);
  CHECK(refused.error().find("(from --mode)") != std::string::npos);
  const auto too_many = parse_config("", "test.toml", {}, {{"--workers", "cluster.num_workers", SettingValue{std::int64_t{0}}}});
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.error().find("(from --workers)") != std::string::npos);
}

TEST_CASE("config override may create an absent section") {
  const auto config = parse_ok("[training]\niterations = 5\n", {"model.@layers=mlp.v1", "model.widths=[64, 32]"});
  CHECK(config.model.architecture == "mlp.v1");
  CHECK(get_integer_list(config.model.settings, "widths") == std::vector<std::int64_t>{64, 32});

  const auto quoted = parse_ok("", {"optimizer.\"@optimizers\"=SGD.v1", "optimizer.learn_rate=0.5"});
  CHECK(quoted.optimizer.name == "SGD.v1");
}

TEST_CASE("config override into an absent [model] keeps the default architecture but a file [model] must name one") {
  const auto config = parse_ok("", {"model.hidden_width=64"});
  CHECK(config.model.architecture == "relu_relu_softmax.v1");
  CHECK(get_integer(config.model.settings, "hidden_width") == 64);

  const auto message = parse_error("[model]\ndropout = 0.1\n", {"model.hidden_width=64"});
  CHECK(contains(message, "model.@layers"));
  CHECK(contains(message, "missing"));
}

TEST_CASE("config rejects a malformed override naming it") {
  const auto no_equals = parse_error("", {"training.batch_size"});
  CHECK(contains(no_equals, "training.batch_size"));
  CHECK(contains(no_equals, "section.key=value"));

  const auto no_section = parse_error("", {"batch_size=3"});
  CHECK(contains(no_section, "batch_size=3"));
  CHECK(contains(no_section, "section.key=value"));

  const auto empty_section = parse_error("", {".x=1"});
  CHECK(contains(empty_section, ".x=1"));
}

TEST_CASE("config validates overrides like file values and says they came from --set") {
  const auto message = parse_error("[training]\nbatch_size = 32\n", {"training.batch_size=0"});
  CHECK(contains(message, "training.batch_size"));
  CHECK(contains(message, "expected an integer >= 1, got 0"));
  CHECK(contains(message, "(from --set)"));

  const auto unknown_key = parse_error("", {"training.batchsize=3"});
  CHECK(contains(unknown_key, "training.batchsize"));
  CHECK(contains(unknown_key, "(from --set)"));

  const auto unknown_section = parse_error("", {"trainig.batch_size=3"});
  CHECK(contains(unknown_section, "trainig"));
  CHECK(contains(unknown_section, "(from --set)"));

  const auto file_error = parse_error("[training]\nbatch_size = 0\n");
  CHECK_FALSE(contains(file_error, "--set"));
}

TEST_CASE("config renders the default config so it parses back identical") {
  const auto config = parse_ok("");
  const auto text = render_config(config);
  CHECK(contains(text, "[model]\n\"@layers\" = \"relu_relu_softmax.v1\"\nhidden_width = 128\ndropout = 0.2\n"));
  CHECK(contains(text, "[optimizer]\n\"@optimizers\" = \"Adam.v1\"\nlearn_rate = 0.001\n"));
  CHECK(contains(text, "[training]\niterations = 200\nbatch_size = 128\nseed = 0\n"));
  CHECK(contains(text, "checkpoint_path = \"\"\n"));
  check_round_trip(config);
}

TEST_CASE("config render fills defaults a hand-built config leaves out") {
  Config config;
  config.source = "built.toml";
  const auto text = render_config(config);
  CHECK(contains(text, "hidden_width = 128"));
  CHECK(contains(text, "beta2 = 0.999"));
  auto reparsed = parse_config(text, "built.toml");
  REQUIRE(reparsed.ok());
  check_same_config(*reparsed, parse_ok(""));
}

TEST_CASE("config render round-trips unusual values exactly") {
  auto config = parse_ok(
      "[training]\nseed = 9223372036854775807\ncheckpoint_path = 'C:\\runs\\\"best\"\\ckpt.bin'\n"
      "[model]\n\"@layers\" = \"mlp.v1\"\nwidths = [300, 100, 7]\ndropout = 0.30000000000000004\n"
      "[optimizer]\n\"@optimizers\" = \"SGD.v1\"\nlearn_rate = 1e-300\nL2 = 3\ngrad_clip = 0.0\n"
      "L2_is_weight_decay = false\n"
      "[cluster]\nmode = \"async\"\nport = 65535\nhost = \"tab\\there\"\n");
  CHECK(config.training.checkpoint_path == "C:\\runs\\\"best\"\\ckpt.bin");
  CHECK(get_number(config.model.settings, "dropout") == 0.1 + 0.2);
  check_round_trip(config);
}

TEST_CASE("config render round-trips configs/mnist.toml") {
  auto config = load_config(kConfigsDir + "/mnist.toml");
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  check_round_trip(*config);
}

TEST_CASE("config files for the tutorial experiment load with the tutorial's values") {
  for (const std::string name : {"mnist", "fashion-mnist"}) {
    auto config = load_config(kConfigsDir + "/" + name + ".toml");
    INFO(name << ": " << (config ? std::string() : config.error()));
    REQUIRE(config.ok());
    CHECK(config->source == kConfigsDir + "/" + name + ".toml");
    check_tutorial_experiment(*config, name);
  }
}

TEST_CASE("config file values can be overridden from the command line") {
  auto config = load_config(kConfigsDir + "/mnist.toml", {"cluster.num_workers=4", "data.name=fashion-mnist"});
  REQUIRE(config.ok());
  CHECK(config->cluster.num_workers == 4);
  CHECK(config->data.name == "fashion-mnist");
}

TEST_CASE("durations are bounded: a huge one would overflow CAF's nanosecond clock and time out at once") {
  for (const char* key : {"heartbeat_ms", "connection_timeout_ms", "server_wait_ms", "request_timeout_ms", "rejoin_timeout_ms",
                          "join_timeout_ms", "worker_delay_ms", "straggler_delay_ms"}) {
    INFO(key);
    CHECK(parse_config("", "test.toml", {std::string("cluster.") + key + "=2592000000"}).ok());  // 30 days
    const auto message = parse_error("", {std::string("cluster.") + key + "=9223372036854775807"});
    CHECK(contains(message, std::string("cluster.") + key + ": expected an integer in ["));
  }
}

TEST_CASE("sync with cluster.pipeline runs on shards, and is refused with backup workers, named") {
  CHECK(parse_config("", "test.toml", {"cluster.mode=sync", "cluster.pipeline=true"}).ok());
  CHECK(parse_config("", "test.toml", {"cluster.mode=async", "cluster.pipeline=true", "cluster.servers=2"}).ok());
  CHECK(parse_config("", "test.toml", {"cluster.mode=sync", "cluster.pipeline=true", "cluster.servers=2"}).ok());
  CHECK(contains(parse_error("", {"cluster.mode=sync", "cluster.pipeline=true", "cluster.num_workers=3",
                                  "cluster.backup_workers=1"}),
                 "cluster.pipeline: sync with the pipeline takes every worker's gradient in each step, but "
                 "cluster.backup_workers is 1"));
}

TEST_CASE("cluster.backup_workers must leave at least one gradient per step") {
  CHECK(parse_config("", "test.toml", {"cluster.num_workers=3", "cluster.backup_workers=2"}).ok());
  const auto message = parse_error("", {"cluster.num_workers=3", "cluster.backup_workers=3"});
  CHECK(contains(message, "cluster.backup_workers: expected fewer than cluster.num_workers (3), got 3"));
}

TEST_CASE("sync backup workers are accepted with several server shards, which sum the workers shard 0 took") {
  CHECK(parse_config("", "test.toml", {"cluster.num_workers=3", "cluster.backup_workers=1", "cluster.servers=2"}).ok());
  CHECK(parse_config("[model]\n\"@layers\" = \"hashembed_mlp.v1\"\nembedding_widths = [4]\nembedding_rows = [10]\n",
                     "test.toml", {"cluster.num_workers=3", "cluster.backup_workers=1", "cluster.servers=2"})
            .ok());
}

namespace {
const std::string kAdam = "[optimizer]\n\"@optimizers\" = \"Adam.v1\"\n";
const std::string kWarmup =
    "[optimizer]\n\"@optimizers\" = \"Adam.v1\"\n\n[optimizer.learn_rate]\n\"@schedules\" = \"warmup_linear.v1\"\n"
    "initial_rate = 0.002\nwarmup_steps = 20\ntotal_steps = 200\n";
}  // namespace

TEST_CASE("config reads [optimizer.learn_rate] as a Thinc schedule with Thinc's parameter names") {
  const auto config = parse_ok(kWarmup);
  CHECK(config.optimizer.schedule == "warmup_linear.v1");
  CHECK(get_number(config.optimizer.schedule_settings, "initial_rate") == 0.002);
  CHECK(get_integer(config.optimizer.schedule_settings, "warmup_steps") == 20);
  CHECK(get_integer(config.optimizer.schedule_settings, "total_steps") == 200);
  // Like Thinc's optimizer, learn_rate holds the schedule's first value: 0 at the start of a warm-up.
  CHECK(get_number(config.optimizer.settings, "learn_rate") == 0.0);
  check_round_trip(config);
  CHECK(contains(render_config(config), "[optimizer.learn_rate]\n\"@schedules\" = \"warmup_linear.v1\"\n"));
}

TEST_CASE("config gives SGD.v1 its required learn_rate from a schedule") {
  const auto config = parse_ok(
      "[optimizer]\n\"@optimizers\" = \"SGD.v1\"\n[optimizer.learn_rate]\n\"@schedules\" = \"decaying.v1\"\n"
      "base_rate = 0.1\ndecay = 0.001\n");
  CHECK(config.optimizer.schedule == "decaying.v1");
  CHECK(get_number(config.optimizer.settings, "learn_rate") == 0.1);
  CHECK(get_integer(config.optimizer.schedule_settings, "t") == 0);  // Thinc's default
  check_round_trip(config);
}

TEST_CASE("config rejects an unknown schedule, an unknown schedule key and a missing one in one line each") {
  auto message = parse_error(kAdam + "[optimizer.learn_rate]\n\"@schedules\" = \"linear.v9\"\n");
  CHECK(contains(message, "optimizer.learn_rate.@schedules"));
  CHECK(contains(message, "\"warmup_linear.v1\""));
  message = parse_error(kWarmup + "warmup = 3\n");
  CHECK(contains(message, "optimizer.learn_rate.warmup: unknown key"));
  CHECK(contains(message, "warmup_steps"));
  message = parse_error(kAdam + "[optimizer.learn_rate]\n\"@schedules\" = \"warmup_linear.v1\"\ninitial_rate = 0.1\n"
                        "warmup_steps = 2\n");
  CHECK(contains(message, "optimizer.learn_rate.total_steps: missing required setting of warmup_linear.v1"));
  message = parse_error(kAdam + "[optimizer.learn_rate]\ninitial_rate = 0.1\n");
  CHECK(contains(message, "optimizer.learn_rate.@schedules"));
  message = parse_error(kAdam + "[optimizer.learn_rate]\n\"@schedules\" = \"slanted_triangular.v1\"\nmax_rate = 0.1\n"
                        "num_steps = 5\n");
  CHECK(contains(message, "optimizer.learn_rate: int(num_steps * cut_frac) must be at least 1"));
}

TEST_CASE("config --set reaches into [optimizer.learn_rate] and replaces a plain learn_rate with a schedule") {
  auto config = load_config(kConfigsDir + "/mnist.toml",
                            {"optimizer.learn_rate.@schedules=cyclic_triangular.v1", "optimizer.learn_rate.min_lr=0.0001",
                             "optimizer.learn_rate.max_lr=0.003", "optimizer.learn_rate.period=50"});
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  CHECK(config->optimizer.schedule == "cyclic_triangular.v1");
  CHECK(get_integer(config->optimizer.schedule_settings, "period") == 50);
  auto plain = parse_ok(kWarmup, {"optimizer.learn_rate=0.01"});
  CHECK(plain.optimizer.schedule.empty());
  CHECK(get_number(plain.optimizer.settings, "learn_rate") == 0.01);
  const auto message = parse_error(kWarmup, {"optimizer.learn_rate.total_steps=-1"});
  CHECK(contains(message, "optimizer.learn_rate.total_steps: expected an integer"));
  CHECK(contains(message, "(from --set)"));
}

TEST_CASE("config --set of another architecture or optimizer drops the old choice's settings with a note") {
  auto config = load_config(kConfigsDir + "/mnist.toml", {"model.@layers=mlp.v1", "optimizer.@optimizers=SGD.v1"});
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  CHECK(config->model.architecture == "mlp.v1");
  CHECK(config->model.settings.count("hidden_width") == 0);
  CHECK(get_number(config->model.settings, "dropout") == 0.2);  // both architectures have it: kept
  CHECK(config->optimizer.name == "SGD.v1");
  CHECK(get_number(config->optimizer.settings, "learn_rate") == 0.001);
  CHECK(config->optimizer.settings.count("beta1") == 0);
  std::string notes;
  for (const auto& note : config->notes) notes += note + "\n";
  INFO(notes);
  CHECK(contains(notes, "model.hidden_width = 128 dropped: mlp.v1 has no such setting"));
  for (const char* key : {"beta1", "beta2", "eps"}) CHECK(contains(notes, std::string("optimizer.") + key + " = "));
  // SGD.v1 has use_averages too, as Thinc's does: kept.
  CHECK_FALSE(contains(notes, "optimizer.use_averages"));
  CHECK(get_boolean(config->optimizer.settings, "use_averages") == true);
  // Without --set choosing it, the same stray key is still an error.
  const auto message = parse_error("[model]\n\"@layers\" = \"mlp.v1\"\nhidden_width = 128\n");
  CHECK(contains(message, "model.hidden_width: unknown key"));
  // A setting --set gave for the new choice is checked, not dropped.
  const auto given = parse_error("", {"model.@layers=mlp.v1", "model.hidden_width=64"});
  CHECK(contains(given, "model.hidden_width: unknown key"));
}

TEST_CASE("config refuses iterations whose optimizer steps in async would not fit their count") {
  // 2^62 iterations x 4 workers is 2^64 steps: it would wrap to 0 and the run would train nothing.
  const auto message = parse_error("[training]\niterations = 4611686018427387904\n[cluster]\nmode = \"async\"\n"
                                   "num_workers = 4\n");
  CHECK(contains(message, "training.iterations"));
  CHECK(contains(message, "4611686018427387904 iterations x 4 workers"));
  CHECK(contains(parse_error("[training]\niterations = 4611686018427387904\n"), "at most 9007199254740992"));
  parse_ok("[training]\niterations = 4503599627370496\n[cluster]\nmode = \"async\"\nnum_workers = 2\n");
}

TEST_CASE("config accepts a schedule that starts at rate 0 and refuses one that is 0 at every step, naming it") {
  const auto config = parse_ok("[optimizer]\n\"@optimizers\" = \"Adam.v1\"\n[optimizer.learn_rate]\n\"@schedules\" = \"warmup_linear.v1\"\ninitial_rate = 0.002\n"
                               "warmup_steps = 20\ntotal_steps = 200\n");
  CHECK(config.optimizer.schedule == "warmup_linear.v1");
  const auto message = parse_error("[optimizer]\n\"@optimizers\" = \"Adam.v1\"\n[optimizer.learn_rate]\n\"@schedules\" = \"constant.v1\"\nrate = 0.0\n");
  CHECK(contains(message, "optimizer.learn_rate"));
  CHECK(contains(message, "constant.v1"));
  CHECK(contains(message, "0 at every one of the run's 200 steps"));
}
