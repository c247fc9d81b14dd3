// Tests for configs in Thinc's format: values, sections, references, comments, errors with lines, the
// tutorial's [ray] section, format detection, --set, and the round trip through `config show --format cfg`.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/thinc_config.hpp"

using namespace psgrad;

namespace {

const std::string kConfigsDir = std::string(PSGRAD_SOURCE_DIR) + "/configs";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ThincConfig read_ok(const std::string& text) {
  auto config = read_thinc_config(text, "test.cfg");
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  return *config;
}

std::string read_error(const std::string& text) {
  auto config = read_thinc_config(text, "test.cfg");
  REQUIRE_FALSE(config.ok());
  INFO("message: " << config.error());
  CHECK(config.error().find('\n') == std::string::npos);
  CHECK(config.error().rfind("test.cfg:", 0) == 0);
  return config.error();
}

// The value at "section.key" (or "a.b.key"), which must be there.
const ThincValue& at(const ThincConfig& config, const std::string& path) {
  const ThincTable* table = &config.sections;
  const ThincValue* value = nullptr;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const auto part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    INFO("path: " << path << ", part: " << part);
    REQUIRE(table != nullptr);
    value = table->find(part);
    REQUIRE(value != nullptr);
    if (dot == std::string::npos) return *value;
    table = value->table();
    start = dot + 1;
  }
}

std::string json_at(const ThincConfig& config, const std::string& path) { return json_text(at(config, path)); }

Config parse_ok(const std::string& text, const std::string& source = "test.cfg",
                const std::vector<std::string>& overrides = {}) {
  auto config = parse_config(text, source, overrides);
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  return *config;
}

std::string parse_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  auto config = parse_config(text, "test.cfg", overrides);
  REQUIRE_FALSE(config.ok());
  INFO("message: " << config.error());
  CHECK(config.error().find('\n') == std::string::npos);
  CHECK(config.error().rfind("test.cfg", 0) == 0);
  return config.error();
}

Config load_ok(const std::string& path) {
  auto config = load_config(path);
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  return *config;
}

}  // namespace

TEST_CASE("a Thinc config's values are JSON as Thinc reads it, and anything else is a string") {
  const auto config = read_ok(
      "[a]\n"
      "integer = 128\nnegative = -3\nfloat = 0.2\nexponent = 1e-08\nwhole_float = 1.0\n"
      "yes = true\nno = false\nnothing = null\n"
      "text = \"relu.v1\"\nescaped = \"tab\\there \\\"quoted\\\" \\u00e9\"\nempty = \"\"\n"
      "list = [1, 2.5, \"three\", [4]]\nobject = {\"@schedules\": \"constant.v1\", \"rate\": 0.1}\n"
      "bare = hello world\nquoted_number = \"1.5\"\nquoted_true = \"true\"\nlist_of_quoted = [\"1\", \"true\", \"x\"]\n"
      "ujson_leniency = 5.\nleading_zero = 007\n"
      "colon: 2\n");
  CHECK(json_at(config, "a.integer") == "128");
  CHECK(json_at(config, "a.negative") == "-3");
  CHECK(json_at(config, "a.float") == "0.2");
  CHECK(json_at(config, "a.exponent") == "1e-08");
  CHECK(json_at(config, "a.whole_float") == "1.0");
  CHECK(json_at(config, "a.yes") == "true");
  CHECK(json_at(config, "a.no") == "false");
  CHECK(json_at(config, "a.nothing") == "null");
  CHECK(json_at(config, "a.text") == "\"relu.v1\"");
  CHECK(*at(config, "a.escaped").text() == "tab\there \"quoted\" \xc3\xa9");
  CHECK(json_at(config, "a.empty") == "\"\"");
  CHECK(json_at(config, "a.list") == "[1, 2.5, \"three\", [4]]");
  CHECK(json_at(config, "a.object") == "{\"@schedules\": \"constant.v1\", \"rate\": 0.1}");
  CHECK(json_at(config, "a.bare") == "\"hello world\"");
  // Thinc unquotes a string before reading it as JSON, so a quoted number is a number; "true" stays text.
  CHECK(json_at(config, "a.quoted_number") == "1.5");
  CHECK(json_at(config, "a.quoted_true") == "\"true\"");
  CHECK(json_at(config, "a.list_of_quoted") == "[1, true, \"x\"]");
  CHECK(json_at(config, "a.ujson_leniency") == "5.0");
  CHECK(json_at(config, "a.leading_zero") == "7");
  CHECK(json_at(config, "a.colon") == "2");
  CHECK(config.lines.at("a") == 1);
  CHECK(config.lines.at("a.integer") == 2);
  CHECK(config.lines.at("a.colon") == 21);
}

TEST_CASE("a value as thinc_text spells it reads back as the same value") {
  const std::vector<ThincValue> values = {
      ThincValue{std::string("1.5")},
      ThincValue{std::string("true")},
      ThincValue{std::string("")},
      ThincValue{std::string("a $ and ${b.c}")},
      ThincValue{std::string("\"quoted\"")},
      ThincValue{std::string("[1, 2]")},
      ThincValue{std::string("  padded  ")},
      ThincValue{std::string("line\nbreak")},
      ThincValue{std::int64_t{-5}},
      ThincValue{0.1},
      ThincValue{1e-300},
      ThincValue{HUGE_VAL},
      ThincValue{-HUGE_VAL},
      ThincValue{true},
      ThincValue{ThincList{ThincValue{std::string("1")}, ThincValue{std::string("$")}}}};
  for (const auto& value : values) {
    const auto text = "[a]\nx = " + thinc_text(value) + "\n";
    INFO("written: " << text);
    CHECK(json_at(read_ok(text), "a.x") == json_text(value));
  }
  CHECK(thinc_text(ThincValue{HUGE_VAL}) == "1e999");  // ujson reads no Infinity
}

TEST_CASE("a Thinc sub-section nests inside its parent, which must exist, and may not clash with a value") {
  const auto config = read_ok(
      "[optimizer]\n@optimizers = \"Adam.v1\"\n\n[optimizer.learn_rate]\n@schedules = \"warmup_linear.v1\"\n"
      "initial_rate = 0.002\n[optimizer.learn_rate.extra]\ndepth = 3\n");
  CHECK(json_at(config, "optimizer.@optimizers") == "\"Adam.v1\"");
  CHECK(json_at(config, "optimizer.learn_rate.@schedules") == "\"warmup_linear.v1\"");
  CHECK(json_at(config, "optimizer.learn_rate.extra.depth") == "3");
  CHECK(config.lines.at("optimizer.learn_rate") == 4);
  CHECK(config.lines.at("optimizer.learn_rate.initial_rate") == 6);
  // Written before its parent in the file is fine: parents are read first, as Thinc reads them.
  CHECK(json_at(read_ok("[a.b]\nx = 1\n[a]\ny = 2\n"), "a.b.x") == "1");

  auto message = read_error("[training]\nx = 1\n\n[optimizer.learn_rate]\nrate = 0.1\n");
  CHECK(contains(message, "test.cfg:4: [optimizer.learn_rate]: section [optimizer] is not defined"));
  message = read_error("[optimizer]\nlearn_rate = 0.1\n[optimizer.learn_rate]\nrate = 0.1\n");
  CHECK(contains(message, "test.cfg:3: [optimizer.learn_rate]: optimizer.learn_rate is already a value"));
}

TEST_CASE("a Thinc ${section.key} fills in a whole value with its type and text inside a string") {
  const auto config = read_ok(
      "[variables]\nwidth = 128\nname = \"relu\"\nrates = [0.1, 0.2]\n"
      "[model]\nhidden_width = ${variables.width}\ncolon = ${variables:width}\n"
      "label = \"${variables.name}_v${variables.width}\"\n"
      "quoted = \"${variables.width}\"\nin_list = [${variables.width}, 2]\nlist = ${variables.rates}\n"
      "same_section = ${hidden_width}\nchained = ${model.same_section}\ndollar = \"costs $$5\"\n");
  CHECK(json_at(config, "model.hidden_width") == "128");
  CHECK(json_at(config, "model.colon") == "128");
  CHECK(json_at(config, "model.label") == "\"relu_v128\"");
  CHECK(json_at(config, "model.quoted") == "128");  // as in Thinc: the quotes go before the value is read
  CHECK(json_at(config, "model.in_list") == "[128, 2]");
  CHECK(json_at(config, "model.list") == "[0.1, 0.2]");
  CHECK(json_at(config, "model.same_section") == "128");
  CHECK(json_at(config, "model.chained") == "128");
  CHECK(json_at(config, "model.dollar") == "\"costs $5\"");
  CHECK(config.referenced.count("variables") == 1);
  CHECK(config.referenced.count("model") == 1);

  CHECK(contains(read_error("[a]\nx = 1\n[b]\ny = ${a.z}\n"), "test.cfg:4: b.y: ${a.z} names no key z in [a]"));
  CHECK(contains(read_error("[a]\nx = ${nowhere}\n"), "test.cfg:2: a.x: ${nowhere} names no key nowhere in [a]"));
  CHECK(contains(read_error("[a]\nx = costs $5\n"), "test.cfg:2: a.x: '$' must be followed by '{' or another '$'"));
  CHECK(contains(read_error("[a]\nx = ${a.y\n"), "test.cfg:2: a.x: bad reference"));
  CHECK(contains(read_error("[a]\nx = ${a.y}\ny = ${a.x}\n"), "test.cfg:2: a.x: references nest more than 10 deep"));
}

TEST_CASE("a Thinc ${section} is a copy of the whole section, and cannot sit inside a string") {
  const auto config = read_ok(
      "[schedules]\n[schedules.warmup]\n@schedules = \"warmup_linear.v1\"\ninitial_rate = 0.002\n"
      "[optimizer]\nlearn_rate = ${schedules.warmup}\nboth = [${schedules.warmup}]\n");
  CHECK(json_at(config, "optimizer.learn_rate") == "{\"@schedules\": \"warmup_linear.v1\", \"initial_rate\": 0.002}");
  CHECK(json_at(config, "optimizer.both") == "[{\"@schedules\": \"warmup_linear.v1\", \"initial_rate\": 0.002}]");
  // A section holding references of its own is copied with them filled in.
  const auto nested = read_ok("[a]\nx = ${b}\n[b]\ny = ${c}\n[c]\nz = 1\n");
  CHECK(json_at(nested, "a.x") == "{\"y\": {\"z\": 1}}");

  CHECK(contains(read_error("[a]\nx = \"see ${b}\"\n[b]\ny = 1\n"), "test.cfg:2: a.x: a whole section"));
  CHECK(contains(read_error("[a]\nx = ${a}\n"), "test.cfg:2: a.x: ${a} refers to a section that contains"));
}

TEST_CASE("a Thinc comment is a whole line starting with # or a semicolon, and text after a value belongs to it") {
  const auto config = read_ok("# a comment\n; another\n[a]\n  # indented comment\nx = 1\ny = 2 # not a comment\n");
  CHECK(json_at(config, "a.x") == "1");
  CHECK(json_at(config, "a.y") == "\"2 # not a comment\"");
  CHECK(config.lines.at("a.x") == 5);
  // So a value with a trailing comment is a string, which the setting's check refuses by its line.
  auto message = parse_error("[training]\niterations = 20 # short\n");
  CHECK(contains(message, "test.cfg:2: training.iterations: expected an integer"));
  CHECK(contains(message, "got \"20 # short\" (Thinc's format has no comments after a value"));
  message = parse_error("[data]\nname = \"mnist\" ; digits\n");
  CHECK(contains(message, "test.cfg:2: data.name: expected a string, one of"));
  CHECK(contains(message, "no comments after a value"));
  // A string that merely holds a '#' gets no such hint.
  message = parse_error("[data]\nname = digits #1\n");
  CHECK_FALSE(contains(message, "no comments after a value"));
}

TEST_CASE("a Thinc value continues on lines indented deeper than its key, blank lines included") {
  const auto config = read_ok("[a]\nlist = [\n    1,\n\n    2\n  ]\ntext = first\n  second\nnext = 3\n");
  CHECK(json_at(config, "a.list") == "[1, 2]");
  CHECK(json_at(config, "a.text") == "\"first\\nsecond\"");
  CHECK(json_at(config, "a.next") == "3");
}

TEST_CASE("a Thinc config's layout errors name the file and the line in one line") {
  CHECK(contains(read_error("x = 1\n[a]\n"), "test.cfg:1: \"x = 1\" is outside any section"));
  CHECK(contains(read_error("[a]\nx = 1\nlonely\n"), "test.cfg:3: expected key = value or a [section] header"));
  CHECK(contains(read_error("[a]\n= 1\n"), "test.cfg:2: no key before '='"));
  CHECK(contains(read_error("[a]\nx = 1\n\n\nx = 2\n"), "test.cfg:5: a.x: written twice in [a] (first on line 2)"));
  CHECK(contains(read_error("[a]\n[b]\n[a]\n"), "test.cfg:3: section [a] is written twice (first on line 1)"));
  CHECK(contains(read_error("[DEFAULT]\nx = 1\n[a]\n"),
                 "test.cfg:2: DEFAULT.x: values in [DEFAULT] are not supported"));
  // As Thinc: "*" is made when a positional section needs it, but its parent must be written first.
  CHECK(contains(read_error("[a.*.b]\nx = 1\n"), "test.cfg:1: [a.*.b]: section [a] is not defined"));
  CHECK(contains(read_error("[a]\nx = 99999999999999999999\ny = 18446744073709551615\n"),
                 "test.cfg:3: a.y: integer 18446744073709551615 is out of range"));
}

TEST_CASE("a Thinc config's settings are checked like TOML's, and the error names the key's line") {
  auto message = parse_error("[training]\niterations = 200\nbatch_size = 0\n");
  CHECK(contains(message, "test.cfg:3: training.batch_size: expected an integer"));
  message = parse_error("[training]\niterations = 20\n[model]\n@layers = \"relu_relu_softmax.v9\"\n");
  CHECK(contains(message, "test.cfg:4: model.@layers: unknown architecture"));
  message = parse_error("[training]\niterations = 20\n\n[model]\nhidden_width = 64\n");
  CHECK(contains(message, "test.cfg:4: model.@layers: missing"));  // a missing key: its section's line
  message = parse_error("[training]\nbatch_size = null\n");
  CHECK(contains(message, "test.cfg:2: training.batch_size: null is not a value any setting takes"));
  message = parse_error("[trainign]\nbatch_size = 8\n");
  CHECK(contains(message, "test.cfg:1: trainign: unknown section"));
  // From --set: no line, and said so.
  message = parse_error("[training]\nbatch_size = 8\n", {"training.batch_size=0"});
  CHECK(contains(message, "test.cfg: training.batch_size: expected an integer"));
  CHECK(contains(message, "(from --set)"));
}

TEST_CASE("the tutorial's [ray] section gives cluster.num_workers and one note for Ray's own keys, in both formats") {
  for (const auto& [text, source] : std::vector<std::pair<std::string, std::string>>{
           {"[ray]\nnum_workers = 3\nobject_store_memory = 3000000000\nnum_cpus = 2\n", "test.cfg"},
           {"[ray]\nnum_workers = 3\nobject_store_memory = 3000000000\nnum_cpus = 2\n", "test.toml"}}) {
    INFO(source);
    const auto config = parse_ok(text, source);
    CHECK(config.cluster.num_workers == 3);
    REQUIRE(config.notes.size() == 1);
    CHECK(contains(config.notes[0], source + ": ray.num_cpus, ray.object_store_memory ignored"));
    CHECK(contains(render_config(config), "[cluster]\nnum_workers = 3\n"));
    CHECK_FALSE(contains(render_config(config), "[ray]"));
  }
  // Without Ray-only keys, nothing to note.
  CHECK(parse_ok("[ray]\nnum_workers = 4\n").notes.empty());
  // Its checks are cluster.num_workers's, named as written.
  auto message = parse_error("[ray]\nnum_workers = 0\n");
  CHECK(contains(message, "test.cfg:2: ray.num_workers: expected an integer in [1, "));
  // A typo is not ignored.
  message = parse_error("[ray]\nnum_worker = 4\n");
  CHECK(contains(message, "test.cfg:2: ray.num_worker: unknown key; [ray] takes num_workers"));
  // Two places for one number: refused in a file, --set wins over the file, --workers over --set.
  message = parse_error("[ray]\nnum_workers = 4\n[cluster]\nnum_workers = 2\n");
  CHECK(contains(message, "test.cfg:2: ray.num_workers: conflicts with cluster.num_workers"));
  CHECK(parse_ok("[ray]\nnum_workers = 4\n", "test.cfg", {"cluster.num_workers=6"}).cluster.num_workers == 6);
  CHECK(parse_ok("[ray]\nnum_workers = 4\n[cluster]\nnum_workers = 2\n", "test.cfg", {"ray.num_workers=5"})
            .cluster.num_workers == 5);
  auto flagged = parse_config("[ray]\nnum_workers = 4\n", "test.cfg", {"ray.num_workers=5"},
                              {FlagSetting{"--workers", "cluster.num_workers", SettingValue{std::int64_t{7}}}});
  REQUIRE(flagged.ok());
  CHECK(flagged->cluster.num_workers == 7);
}

TEST_CASE("configs/tutorial.cfg is the tutorial's CONFIG string and parses to the same job as configs/mnist.toml") {
  const auto tutorial = load_ok(kConfigsDir + "/tutorial.cfg");
  const auto mnist = load_ok(kConfigsDir + "/mnist.toml");
  // The rendered config holds every key of every section, defaults filled in.
  CHECK(render_config(tutorial) == render_config(mnist));
  CHECK(render_config(tutorial, ConfigFormat::thinc) == render_config(mnist, ConfigFormat::thinc));
  REQUIRE(tutorial.notes.size() == 1);
  CHECK(contains(tutorial.notes[0], "ray.num_cpus, ray.object_store_memory ignored"));
  CHECK(mnist.notes.empty());
}

TEST_CASE("the config format follows the file's extension, else the first construct only one format reads") {
  CHECK(config_format("a.cfg", "") == ConfigFormat::thinc);
  CHECK(config_format("a.INI", "") == ConfigFormat::thinc);
  CHECK(config_format("a.toml", "[model]\n@layers = \"x\"\n") == ConfigFormat::toml);
  CHECK(config_format("<string>", "") == ConfigFormat::toml);
  CHECK(config_format("<string>", "[training]\nbatch_size = 64\n[model]\n@layers = \"mlp.v1\"\n") ==
        ConfigFormat::thinc);
  CHECK(config_format("<string>", "[model]\n\"@layers\" = \"mlp.v1\"\n") == ConfigFormat::toml);
  CHECK(config_format("<string>", "[a]\nx = ${b.c}\n") == ConfigFormat::thinc);
  CHECK(config_format("<string>", "[a]\nx: 1\n") == ConfigFormat::thinc);
  CHECK(config_format("<string>", "[a]\nmode = async\n") == ConfigFormat::thinc);
  CHECK(config_format("<string>", "[a]\nx = {\"b\": 1}\n") == ConfigFormat::thinc);
  CHECK(config_format("<string>", "[a]\nx = { b = 1 }\n") == ConfigFormat::toml);
  CHECK(config_format("<string>", "[a]\nx = 'literal'\n") == ConfigFormat::toml);
  CHECK(config_format("<string>", "[a]\nb.c = 1\n") == ConfigFormat::toml);
  CHECK(config_format("<string>", "[[a]]\nx = 1\n") == ConfigFormat::toml);
  CHECK(config_format("<string>", "[a]\nlist = [\n  \"b:c\",\n]\nx = 'y'\n") == ConfigFormat::toml);
  // The first deciding line wins; comments and lines inside a list decide nothing.
  CHECK(config_format("<string>", "# x: y\n[a]\nlist = [\n  1,\n]\n\"@layers\" = \"x\"\n@b = 1\n") ==
        ConfigFormat::toml);
  // What a Python binding sends: the tutorial's string, with no file name, gets Thinc's reader.
  const auto text = render_config(load_ok(kConfigsDir + "/tutorial.cfg"), ConfigFormat::thinc);
  CHECK(parse_ok(text, "<string>").training.iterations == 200);
  // Rendered TOML, as a server or a checkpoint passes it on, stays TOML.
  CHECK(config_format("config from server 127.0.0.1:4242", render_config(load_ok(kConfigsDir + "/tutorial.cfg"))) ==
        ConfigFormat::toml);
}

TEST_CASE("--set overrides a Thinc config's keys before references are filled in, as Thinc's overrides do") {
  const std::string text =
      "[training]\nbatch_size = 32\n[evaluation]\nbatch_size = ${training.batch_size}\n"
      "[model]\n@layers = \"relu_relu_softmax.v1\"\n[optimizer]\n@optimizers = \"Adam.v1\"\n"
      "[optimizer.learn_rate]\n@schedules = \"warmup_linear.v1\"\ninitial_rate = 0.002\nwarmup_steps = 20\n"
      "total_steps = 200\n";
  const auto plain = parse_ok(text);
  CHECK(plain.evaluation.batch_size == 32);
  const auto overridden = parse_ok(text, "test.cfg",
                                   {"training.batch_size=64", "model.dropout=0.5", "cluster.mode=async",
                                    "optimizer.learn_rate.warmup_steps=5"});
  CHECK(overridden.training.batch_size == 64);
  CHECK(overridden.evaluation.batch_size == 64);
  CHECK(get_number(overridden.model.settings, "dropout") == 0.5);
  CHECK(overridden.cluster.mode == TrainingMode::async);
  CHECK(get_integer(overridden.optimizer.schedule_settings, "warmup_steps") == 5);
  // A plain learn_rate replaces the schedule sub-section, as in TOML.
  const auto rate = parse_ok(text, "test.cfg", {"optimizer.learn_rate=0.01"});
  CHECK(rate.optimizer.schedule.empty());
  CHECK(get_number(rate.optimizer.settings, "learn_rate") == 0.01);
  // A string with a '$' stays text.
  CHECK(parse_ok(text, "test.cfg", {"training.checkpoint_path=a$b${c}"}).training.checkpoint_path == "a$b${c}");
}

TEST_CASE("a Thinc section that only holds values for ${...} is left out, another unknown one is refused") {
  const auto config = parse_ok("[hyper]\nwidth = 64\n[model]\n@layers = \"relu_relu_softmax.v1\"\n"
                               "hidden_width = ${hyper.width}\n");
  CHECK(get_integer(config.model.settings, "hidden_width") == 64);
  CHECK(contains(parse_error("[hyper]\nwidth = 64\n"), "test.cfg:1: hyper: unknown section"));
}

TEST_CASE("config show --format cfg writes a config that parses back to the same config") {
  for (const auto& name : {"tutorial.cfg", "mnist.toml", "fashion-mnist.toml"}) {
    INFO(name);
    const auto config = load_ok(kConfigsDir + "/" + name);
    const auto text = render_config(config, ConfigFormat::thinc);
    INFO("rendered:\n" << text);
    CHECK(contains(text, "[model]\n@layers = \"relu_relu_softmax.v1\"\n"));
    const auto reparsed = parse_ok(text, "shown.cfg");
    CHECK(render_config(reparsed, ConfigFormat::thinc) == text);
    CHECK(render_config(reparsed) == render_config(config));
  }
  // Strings Thinc would read as something else, '$', quotes, backslashes; a schedule as a sub-section.
  const auto unusual = parse_ok(
      "[training]\ncheckpoint_path = 'C:\\runs\\\"best\"\\${x}$$.bin'\nseed = 9223372036854775807\n"
      "[model]\n\"@layers\" = \"mlp.v1\"\nwidths = [300, 100, 7]\ndropout = 0.30000000000000004\n"
      "[optimizer]\n\"@optimizers\" = \"Adam.v1\"\n[optimizer.learn_rate]\n\"@schedules\" = \"warmup_linear.v1\"\n"
      "initial_rate = 1e-300\nwarmup_steps = 20\ntotal_steps = 200\n"
      "[data]\npath = \"1.5\"\ndev_path = \"true\"\nscale = 0.00392156862745098\n"
      "[cluster]\njoin_token = \"[1, 2]\"\nhost = \"tab\\there\\nnewline\"\ntls_ca = \"\\\"quoted\\\"\"\n",
      "unusual.toml");
  const auto text = render_config(unusual, ConfigFormat::thinc);
  INFO("rendered:\n" << text);
  CHECK(contains(text, "[optimizer.learn_rate]\n@schedules = \"warmup_linear.v1\"\n"));
  const auto reparsed = parse_ok(text, "shown.cfg");
  CHECK(reparsed.training.checkpoint_path == "C:\\runs\\\"best\"\\${x}$$.bin");
  CHECK(reparsed.data.path == "1.5");
  CHECK(reparsed.data.dev_path == "true");
  CHECK(reparsed.data.scale == 1.0 / 255);
  CHECK(reparsed.cluster.join_token == "[1, 2]");
  CHECK(reparsed.cluster.host == "tab\there\nnewline");
  CHECK(reparsed.cluster.tls_ca == "\"quoted\"");
  CHECK(render_config(reparsed) == render_config(unusual));
  CHECK(render_config(reparsed, ConfigFormat::thinc) == text);
}

TEST_CASE("named data columns survive the round trip through Thinc's format, a max_id as a section of its own") {
  const auto config = parse_ok(
      "[data]\npath = \"packages.jsonl\"\nlabel = \"section\"\n"
      "[data.columns]\nsummary = \"text\"\ndepends = { kind = \"ids\", max_id = 100 }\n",
      "columns.toml");
  const auto text = render_config(config, ConfigFormat::thinc);
  INFO("rendered:\n" << text);
  CHECK(contains(text, "[data.columns]\nsummary = \"text\"\n"));
  CHECK(contains(text, "[data.columns.depends]\nkind = \"ids\"\nmax_id = 100\n"));
  const auto reparsed = parse_ok(text, "shown.cfg");
  CHECK(render_config(reparsed) == render_config(config));
  REQUIRE(reparsed.data.columns.size() == 2);
}
