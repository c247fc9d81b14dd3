// Tests for a sparse run's config and data: the [tables] section (keys, refusals, render round trip in
// both formats), the model and data kinds agreeing, and the train/dev split of named-column files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "apps/sparse_data.hpp"
#include "io/config.hpp"
#include "io/config_reference.hpp"
#include "io/sparse_examples.hpp"
#include "model/table_optimizer.hpp"
#include "sparse_cli_fixtures.hpp"
#include "temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Config parse_ok(const std::string& text, const std::vector<std::string>& overrides = {},
                const std::string& source = "test.toml") {
  auto config = parse_config(text, source, overrides);
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  return *config;
}

std::string parse_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  auto config = parse_config(text, "test.toml", overrides);
  REQUIRE_FALSE(config.ok());
  INFO("message: " << config.error());
  CHECK(config.error().find('\n') == std::string::npos);
  return config.error();
}

}  // namespace

TEST_CASE("[tables] chooses lazy Adam by default and Adagrad with its own keys") {
  const auto lazy = parse_ok(colour_config("x.jsonl"));
  CHECK(lazy.tables.optimizer == "lazy_adam");
  CHECK(table_optimizer_choice(lazy.tables).kind == TableOptimizerKind::lazy_adam);
  const auto adagrad = parse_ok(colour_config("x.jsonl", "\n[tables]\noptimizer = \"adagrad\"\nlearn_rate = 0.05\n"
                                                         "initial_accumulator = 0.2\neps = 1e-6\ngrad_clip = 2.0\n"));
  const auto choice = table_optimizer_choice(adagrad.tables);
  CHECK(choice.kind == TableOptimizerKind::adagrad);
  CHECK(choice.adagrad.learn_rate == 0.05);
  CHECK(choice.adagrad.initial_accumulator == 0.2);
  CHECK(choice.adagrad.eps == 1e-6);
  CHECK(choice.adagrad.grad_clip == 2.0);
  const auto defaults = table_optimizer_choice(parse_ok(colour_config("x.jsonl"), {"tables.optimizer=adagrad"}).tables);
  CHECK(defaults.adagrad.learn_rate == 0.01);
  CHECK(defaults.adagrad.initial_accumulator == 0.1);
  CHECK(defaults.adagrad.eps == 1e-7);
  CHECK(defaults.adagrad.grad_clip == 0.0);
}

TEST_CASE("[tables] refuses Adagrad keys beside lazy Adam, unknown optimizers, and a dense model") {
  auto message = parse_error(colour_config("x.jsonl", "\n[tables]\nlearn_rate = 0.05\n"));
  CHECK(contains(message, "tables.learn_rate: is an adagrad setting, but tables.optimizer is \"lazy_adam\""));
  message = parse_error(colour_config("x.jsonl"), {"tables.optimizer=sgd"});
  CHECK(contains(message, "tables.optimizer"));
  CHECK(contains(message, "(from --set)"));
  message = parse_error("[tables]\noptimizer = \"adagrad\"\n");
  CHECK(contains(message, "test.toml: tables: sets embedding tables' optimizer, but model.@layers "
                          "\"relu_relu_softmax.v1\" has no embedding tables"));
  message = parse_error(colour_config("x.jsonl"), {"optimizer.@optimizers=SGD.v1", "optimizer.learn_rate=0.1"});
  CHECK(contains(message, "tables.optimizer: embedding tables step with lazy Adam"));
  CHECK(contains(message, "or set tables.optimizer = \"adagrad\""));
  parse_ok(colour_config("x.jsonl"), {"optimizer.@optimizers=SGD.v1", "optimizer.learn_rate=0.1",
                                      "tables.optimizer=adagrad"});
}

TEST_CASE("a sparse config renders and reads back the same in TOML and Thinc's format") {
  for (const auto& extra : {std::string(), std::string("\n[tables]\noptimizer = \"adagrad\"\nlearn_rate = 0.05\n")}) {
    const auto config = parse_ok(colour_config("/data/x.jsonl", extra));
    for (const auto format : {ConfigFormat::toml, ConfigFormat::thinc}) {
      const auto text = render_config(config, format);
      const auto again = parse_ok(text, {}, format == ConfigFormat::toml ? "again.toml" : "again.cfg");
      CHECK(again.model.architecture == "hashembed_mlp.v1");
      CHECK(again.model.settings == config.model.settings);
      CHECK(again.tables.optimizer == config.tables.optimizer);
      CHECK(again.tables.learn_rate == config.tables.learn_rate);
      CHECK(again.data.columns == config.data.columns);
      CHECK(render_config(again, format) == text);
    }
  }
  CHECK_FALSE(contains(render_config(parse_ok("")), "[tables]"));
}

TEST_CASE("the config reference lists [tables] and hashembed_mlp.v1's settings") {
  const auto reference = config_reference_markdown();
  CHECK(contains(reference, "| tables | `optimizer` |"));
  CHECK(contains(reference, "| tables | `initial_accumulator` |"));
  CHECK(contains(reference, "| model (hashembed_mlp.v1) | `embedding_rows` |"));
}

TEST_CASE("named columns with a dense model, and a model with tables without them, are refused in one line") {
  auto dense = parse_ok(colour_config("x.jsonl"), {"model.@layers=relu_relu_softmax.v1"});
  auto refused = check_model_fits_data(dense);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().rfind("test.toml: data.columns: named columns feed embedding tables, but model.@layers "
                              "\"relu_relu_softmax.v1\" has none",
                              0) == 0);
  CHECK(refused.error().find('\n') == std::string::npos);
  auto sparse = parse_ok("[model]\n\"@layers\" = \"hashembed_mlp.v1\"\n");
  refused = check_model_fits_data(sparse);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().rfind("test.toml: model.@layers: \"hashembed_mlp.v1\" reads named columns, but the config "
                              "declares none",
                              0) == 0);
  CHECK(load_sparse_split(sparse).error() == refused.error());
  CHECK(check_model_fits_data(parse_ok(colour_config("x.jsonl"))).ok());
  CHECK(check_model_fits_data(parse_ok("")).ok());
}

TEST_CASE("a sparse split holds out the last dev_fraction of each class in file order, with the class names") {
  TempFolder folder("sparse-split");
  const auto path = folder.file("colours.jsonl");
  write_colour_jsonl(path, 200, 7);
  const auto config = parse_ok(colour_config(path));
  auto split = load_sparse_split(config);
  REQUIRE(split.ok());
  const auto whole = read_sparse_examples(path, sparse_layout(config.data));
  REQUIRE(whole.ok());
  CHECK(split->class_names == std::vector<std::string>{"blue", "green", "red"});
  CHECK(split->train->count + split->dev->count == 200);
  // Per class: the first 75% (rounded) in training, the rest in dev, each in file order.
  for (std::uint32_t c = 0; c < 3; ++c) {
    std::vector<std::size_t> of_class;
    for (std::size_t e = 0; e < whole->count; ++e)
      if (whole->labels[e] == c) of_class.push_back(e);
    const auto dev_count = static_cast<std::size_t>(std::llround(0.25 * static_cast<double>(of_class.size())));
    CHECK(std::count(split->dev->labels.begin(), split->dev->labels.end(), c) == static_cast<long>(dev_count));
    // The last example of the class is dev's last of that class, bag and all.
    const auto last = of_class.back();
    std::size_t dev_last = 0;
    for (std::size_t e = 0; e < split->dev->count; ++e)
      if (split->dev->labels[e] == c) dev_last = e;
    for (std::size_t f = 0; f < 2; ++f) {
      const auto& all_field = whole->id_fields[f];
      const auto& dev_field = split->dev->id_fields[f];
      REQUIRE(dev_field.length(dev_last) == all_field.length(last));
      CHECK(std::equal(all_field.bag(last), all_field.bag(last) + all_field.length(last), dev_field.bag(dev_last)));
    }
  }
  const auto majority = majority_class(split->train->labels, 3);
  const auto hits = std::count(split->dev->labels.begin(), split->dev->labels.end(), majority);
  CHECK(split->majority_accuracy == doctest::Approx(static_cast<double>(hits) / split->dev->count));
  CHECK(contains(split->description, "always \"" + split->class_names[majority] + "\" scores"));
}

TEST_CASE("a dev file's labels are numbered as training's, and one training never saw is refused at its line") {
  TempFolder folder("sparse-dev-path");
  const auto train_path = folder.file("train.jsonl");
  const auto dev_path = folder.file("dev.jsonl");
  write_colour_jsonl(train_path, 60, 1);
  // Only "red" and "green" in dev: numbered as training numbers them, not 0 and 1 of their own.
  write_file_bytes(dev_path, "{\"words\":\"w2\",\"noise\":[1],\"colour\":\"red\"}\n"
                             "{\"words\":\"w1\",\"noise\":[1],\"colour\":\"green\"}\n");
  auto config = parse_ok(colour_config(train_path), {"data.dev_fraction=0", "data.dev_path=\"" + dev_path + "\""});
  auto split = load_sparse_split(config);
  REQUIRE(split.ok());
  CHECK(split->dev->labels == std::vector<std::uint32_t>{2, 1});
  CHECK(split->dev->class_names == split->class_names);
  write_file_bytes(dev_path, "{\"words\":\"w2\",\"noise\":[1],\"colour\":\"red\"}\n\n"
                             "{\"words\":\"w1\",\"noise\":[1],\"colour\":\"mauve\"}\n");
  split = load_sparse_split(config);
  REQUIRE_FALSE(split.ok());
  CHECK(split.error() == dev_path + ":3: column \"colour\": label \"mauve\" was not among the 3 classes of the "
                                    "training data");
}
