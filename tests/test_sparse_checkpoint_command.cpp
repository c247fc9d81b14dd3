// `psgrad train` with checkpoints of a sparse run, on the built binary: training.checkpoint_path writes
// them, --resume continues one to the uninterrupted run's final weights on another cluster.servers (with
// or without --config), and a checkpoint that does not fit is refused in one line before training.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "io/checkpoint_file.hpp"
#include "model/checkpoint_tables.hpp"
#include "io/model_file.hpp"
#include "psgrad_binary.hpp"
#include "sparse_cli_fixtures.hpp"
#include "temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The run's "final weights: version V, hash H" line.
std::string final_weights(const std::string& output) {
  std::smatch match;
  if (!std::regex_search(output, match, std::regex("final weights: version [0-9]+, hash [0-9a-f]+"))) return "";
  return match[0];
}

struct CheckpointedRun {
  TempFolder folder{"sparse-checkpoint-cli"};
  std::string data = folder.file("colours.jsonl");
  std::string config = folder.file("colours.toml");
  std::string checkpoint = folder.file("run.ckpt");
  CheckpointedRun() {
    write_colour_jsonl(data, 300, 3);
    write_file_bytes(config, colour_config(data));
  }
  CommandRun train(const std::string& arguments) const {
    return run_psgrad("train --no-metrics " + arguments);
  }
};

}  // namespace

TEST_CASE("train --resume continues a sparse run's checkpoint to the uninterrupted run's final weights") {
  CheckpointedRun run;
  const auto whole = run.train("--config " + run.config + " --set training.iterations=24");
  INFO(whole.output);
  REQUIRE(whole.exit_code == 0);
  const auto expected = final_weights(whole.output);
  REQUIRE_FALSE(expected.empty());

  const auto model = run.folder.file("model.psg");
  const auto first = run.train("--config " + run.config + " --set training.iterations=10 --set training.checkpoint_path=" +
                               run.checkpoint + " --save " + model);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK(contains(first.output, "checkpoint at iteration 10 written to " + run.checkpoint));
  // The saved model holds the rows the checkpoint holds, those training touched, and no other.
  const auto checkpoint = read_checkpoint(run.checkpoint);
  REQUIRE(checkpoint.ok());
  const auto saved = read_model_file(model);
  REQUIRE(saved.ok());
  const auto tables = tables_for_shard(*checkpoint, 0, 1).value();
  REQUIRE(saved->tables.has_value());
  REQUIRE(saved->tables->tables.size() == tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    CHECK(saved->tables->tables[t].rows.keys == tables[t].keys);
    CHECK(saved->tables->tables[t].rows.values == tables[t].rows);
  }
  CHECK(contains(first.output, fmt::format("({} touched table rows, ", table_state_size(*checkpoint).rows)));

  // On 3 table shards where the checkpoint's run had 1: the rows are re-split by key.
  const auto resumed = run.train("--config " + run.config + " --resume " + run.checkpoint +
                                 " --set training.iterations=24 --set cluster.servers=3");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(final_weights(resumed.output) == expected);
  // Without --config, the config inside the checkpoint is the run's.
  const auto from_checkpoint = run.train("--resume " + run.checkpoint + " --set training.iterations=24");
  INFO(from_checkpoint.output);
  REQUIRE(from_checkpoint.exit_code == 0);
  CHECK(final_weights(from_checkpoint.output) == expected);
}

TEST_CASE("train --resume refuses a checkpoint that does not fit the sparse run, in one line, before training") {
  CheckpointedRun run;
  REQUIRE(run.train("--config " + run.config + " --set training.iterations=4 --set training.checkpoint_path=" +
                    run.checkpoint)
              .exit_code == 0);
  const auto other_data = run.folder.file("other.jsonl");
  write_colour_jsonl(other_data, 300, 4);
  const auto other_config = run.folder.file("other.toml");
  write_file_bytes(other_config, colour_config(other_data));
  const auto dense_checkpoint = run.folder.file("dense.ckpt");
  TrainingCheckpoint dense;
  dense.weights = {1.0f};
  REQUIRE(write_checkpoint(dense_checkpoint, dense).ok());
  const std::pair<std::string, std::string> refusals[] = {
      {"--config " + run.config + " --resume " + run.checkpoint + " --set training.seed=5",
       "checkpoint was written with training.seed = 0"},
      {"--config " + other_config + " --resume " + run.checkpoint, "training data differs"},
      {"--config " + run.config + " --resume " + run.checkpoint + " --set tables.optimizer=\"adagrad\"",
       "its tables stepped with LazyAdam, this run's with Adagrad"},
      {"--config " + run.config + " --resume " + dense_checkpoint, "checkpoint holds no embedding tables"},
  };
  for (const auto& [arguments, expected] : refusals) {
    const auto refused = run.train(arguments);
    INFO(arguments << "\n" << refused.output);
    CHECK(refused.exit_code != 0);
    CHECK(line_count(refused.output) == 1);
    CHECK(contains(refused.output, expected));
    CHECK_FALSE(contains(refused.output, "accuracy"));
  }
}
