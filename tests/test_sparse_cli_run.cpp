// Tests for `psgrad train`, `predict` and `eval` with a model with embedding tables, on the built binary
// and small generated files: progress lines and summary, the saved model's predictions against the same
// run in this process, an unseen label refused, and what sparse runs refuse before training.
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "caf/actor_system.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "apps/sparse_data.hpp"
#include "io/config.hpp"
#include "io/sparse_examples.hpp"
#include "model/embedding_table.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"
#include "model/table_optimizer.hpp"
#include "psgrad_binary.hpp"
#include "sparse_cli_fixtures.hpp"
#include "temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string captured(const std::string& text, const std::string& pattern) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(pattern))) return "";
  return match[1];
}

struct ColourRun {
  TempFolder folder{"sparse-cli"};
  std::string data = folder.file("colours.jsonl");
  std::string config = folder.file("colours.toml");
  ColourRun(const std::string& extra = "") {
    write_colour_jsonl(data, 400, 3);
    write_file_bytes(config, colour_config(data, extra));
  }
  CommandRun train(const std::string& arguments = "") const {
    return run_psgrad("train --config " + config + " --no-metrics " + arguments);
  }
};

// The names predicted for every example of `path` by the dense weights and tables a run ended with: the
// saved rows where the run made them, else the rows a fresh table makes on a pull.
std::vector<std::string> names_predicted(const TrainingJob& job, const TrainedRun& summary,
                                         const SparseDataset& examples) {
  auto model = SparseModel::build(job.model.architecture, job.model.settings, examples.num_classes()).value();
  const auto& weights = summary.run.final_weights.values;
  model.dense().set_weights(weights.data(), weights.size());
  const auto batch = gather_examples(examples, {}, 0, examples.count);
  const auto lookup = model.look_up(batch.fields).value();
  std::vector<SparseRows> rows;
  for (std::size_t f = 0; f < lookup.fields.size(); ++f) {
    EmbeddingTable fresh({model.fields()[f].width, embedding_init_seed(job.training.seed, f)});
    auto pulled = fresh.pull(lookup.fields[f].keys).value();
    const auto& trained = summary.tables[f];
    for (std::size_t i = 0; i < pulled.size(); ++i) {
      const auto at = std::lower_bound(trained.keys.begin(), trained.keys.end(), pulled.keys[i]);
      if (at != trained.keys.end() && *at == pulled.keys[i])
        std::copy(trained.row(at - trained.keys.begin()), trained.row(at - trained.keys.begin()) + trained.width,
                  pulled.row(i));
    }
    rows.push_back(std::move(pulled));
  }
  const auto probabilities = model.predict(lookup, rows);
  std::vector<std::string> names;
  for (Eigen::Index e = 0; e < probabilities.rows(); ++e) {
    Eigen::Index best = 0;
    probabilities.row(e).maxCoeff(&best);
    names.push_back(examples.class_names[static_cast<std::size_t>(best)]);
  }
  return names;
}

}  // namespace

TEST_CASE("train prints accuracy lines and a final accuracy above the majority class on a learnable set") {
  ColourRun run;
  const auto trained = run.train();
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  CHECK(contains(trained.output, "Running synchronous parameter server training: 2 workers, 60 iterations"));
  CHECK(std::regex_search(trained.output, std::regex("(^|\n)0\taccuracy: [0-9.]+\n")));
  CHECK(std::regex_search(trained.output, std::regex("\nFinal \taccuracy: [0-9.]+\n")));
  const auto baseline = captured(trained.output, "scores ([0-9.]+) on dev");
  const auto final_accuracy = captured(trained.output, "sync summary: workers 2, steps 60, final accuracy ([0-9.]+)");
  REQUIRE_FALSE(baseline.empty());
  REQUIRE_FALSE(final_accuracy.empty());
  CHECK(std::stod(final_accuracy) > std::stod(baseline));
}

TEST_CASE("a saved sparse model predicts the names of the run in this process, and eval scores what it printed") {
  ColourRun run;
  const auto model = run.folder.file("model.psg");
  const auto trained = run.train("--save " + model + " --mode sync");
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const auto dev = run.folder.file("dev.jsonl");
  write_colour_jsonl(dev, 50, 99, 30);  // tokens from 30 up: some the run never trained

  // The same run in this process: sync training is the same bits on any machine and thread count.
  const auto config = load_config(run.config).value();
  const auto split = load_sparse_split(config).value();
  ActorConfig actor_config(2);
  prepare_local_run(actor_config, config.cluster.num_workers);
  caf::actor_system system{actor_config};
  const auto summary =
      train_in_process(system, config, run_on_columns(split.train, split.dev, table_optimizer_choice(config.tables)));
  REQUIRE(summary.ok());
  CHECK(contains(trained.output, fmt::format("final weights: version {},", summary->run.final_weights.version)));

  auto layout = sparse_layout(config.data);
  layout.known_classes = split.class_names;
  const auto examples = read_sparse_examples(dev, layout).value();
  const auto expected = names_predicted(config, *summary, examples);
  const auto predicted = run_psgrad("predict --model " + model + " " + dev);
  INFO(predicted.output);
  REQUIRE(predicted.exit_code == 0);
  std::istringstream lines(predicted.output);
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line);) names.push_back(captured(line, "^[0-9]+\t([a-z]+)\t"));
  CHECK(names == expected);

  // Without --data, eval scores the run's own dev split: the final accuracy the run printed.
  const auto evaluated = run_psgrad("eval --model " + model);
  INFO(evaluated.output);
  REQUIRE(evaluated.exit_code == 0);
  CHECK(captured(evaluated.output, "\naccuracy: ([0-9.]+)") ==
        captured(trained.output, "final accuracy ([0-9.]+)"));
  // As a dense model's eval: per-class accuracy by the class's name, and a confusion matrix whose
  // diagonal is the correct count the accuracy line gives.
  const auto correct = std::stoul(captured(evaluated.output, "\naccuracy: [0-9.]+ \\(([0-9]+)/"));
  for (const auto* name : {"blue", "green", "red"})
    CHECK(std::regex_search(evaluated.output, std::regex(std::string("\n  ") + name + ": [0-9.]{5} \\([0-9]+/[0-9]+\\)")));
  CHECK(contains(evaluated.output, "classes by number: 0 blue, 1 green, 2 red"));
  const auto matrix = evaluated.output.substr(evaluated.output.find("confusion matrix"));
  std::istringstream rows(matrix);
  std::string line;
  std::getline(rows, line);  // the title
  std::getline(rows, line);  // the column numbers
  std::size_t diagonal = 0;
  for (std::size_t truth = 0; truth < 3 && std::getline(rows, line); ++truth) {
    std::istringstream cells(line);
    std::size_t label = 0, count = 0;
    cells >> label;
    for (std::size_t predicted = 0; predicted <= truth; ++predicted) cells >> count;
    diagonal += count;
  }
  CHECK(diagonal == correct);
}

TEST_CASE("eval refuses a label the model never saw, naming the file, the line and the label") {
  ColourRun run;
  const auto model = run.folder.file("model.psg");
  REQUIRE(run.train("--save " + model + " --set training.iterations=2").exit_code == 0);
  const auto data = run.folder.file("unseen.jsonl");
  write_file_bytes(data, "{\"words\":\"w1\",\"noise\":[1],\"colour\":\"green\"}\n"
                         "{\"words\":\"w2\",\"noise\":[1],\"colour\":\"purple\"}\n");
  const auto evaluated = run_psgrad("eval --model " + model + " --data " + data);
  CHECK(evaluated.exit_code != 0);
  CHECK(line_count(evaluated.output) == 1);
  CHECK(contains(evaluated.output, data + ":2: column \"colour\": label \"purple\" was not among the 3 classes"));
}

TEST_CASE("sparse runs refuse in one line, before training, what they do not offer and tables too big") {
  ColourRun run;
  const std::pair<std::string, std::string> refusals[] = {
      {"--set training.with_averages=true", "training.with_averages is not offered"},
      {"--set model.embedding_rows=[4294967296,50] --set model.embedding_widths=[1024,4]",
       "the embedding tables can grow to"},
  };
  for (const auto& [arguments, expected] : refusals) {
    const auto refused = run.train(arguments);
    INFO(arguments << "\n" << refused.output);
    CHECK(refused.exit_code != 0);
    CHECK(line_count(refused.output) == 1);
    CHECK(contains(refused.output, expected));
    CHECK_FALSE(contains(refused.output, "accuracy"));
  }
  // Named columns with a dense model: refused by the dense run, whose data cannot be named columns.
  auto dense = colour_config(run.data);
  const auto model = dense.find("[model]");
  dense.replace(model, dense.find("[optimizer]") - model, "[model]\n\"@layers\" = \"relu_relu_softmax.v1\"\n\n");
  write_file_bytes(run.config, dense);
  const auto refused = run.train();
  INFO(refused.output);
  CHECK(line_count(refused.output) == 1);
  CHECK(contains(refused.output, "data.columns: named columns feed embedding tables, but model.@layers "
                                 "\"relu_relu_softmax.v1\" has none"));
}

TEST_CASE("a saved model that reads number columns scores its dev split as the run did, and predicts every row") {
  TempFolder folder{"sparse-cli-numbers"};
  const auto data = folder.file("clicks.jsonl");
  const auto config = folder.file("clicks.toml");
  const auto made = run_psgrad("data click-logs --rows 1500 --out " + data);
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  write_file_bytes(config, fmt::format(R"([training]
iterations = 30
batch_size = 64
seed = 2
[evaluation]
batch_size = 128
frequency = 10
[model]
"@layers" = "hashembed_mlp.v1"
embedding_widths = [8, 8]
embedding_rows = [512, 512]
numbers = "log1p"
hidden_width = 16
[optimizer]
"@optimizers" = "Adam.v1"
[data]
path = "{}"
label = "label"
dev_fraction = 0.2
[data.columns]
C1 = "ids"
C2 = "ids"
I1 = "number"
I2 = "number"
[cluster]
num_workers = 2
servers = 2
)",
                                       data));
  const auto model = folder.file("clicks.psg");
  const auto trained = run_psgrad("train --config " + config + " --no-metrics --save " + model);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const auto evaluated = run_psgrad("eval --model " + model);
  INFO(evaluated.output);
  REQUIRE(evaluated.exit_code == 0);
  CHECK(captured(evaluated.output, "\naccuracy: ([0-9.]+)") == captured(trained.output, "final accuracy ([0-9.]+)"));
  const auto predicted = run_psgrad("predict --model " + model + " " + data);
  REQUIRE(predicted.exit_code == 0);
  CHECK(std::count(predicted.output.begin(), predicted.output.end(), '\n') == 1500);
}
