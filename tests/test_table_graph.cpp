// Layer graphs with embedding tables: their table front and dense rest, and the graphs refused.
#include <doctest/doctest.h>

#include <string>

#include "io/config.hpp"
#include "model/model.hpp"
#include "model/sparse_model.hpp"
#include "model/table_graph.hpp"

using namespace psgrad;

namespace {

ModelSection model_of(const std::string& text) {
  auto config = parse_config(text, "model.cfg");
  REQUIRE_MESSAGE(config.ok(), config.error());
  return config->model;
}

std::string column(const std::string& at, const std::string& embed_arguments, const std::string& pool = "reduce_mean.v1") {
  return "[" + at + "]\n@layers = \"chain.v1\"\n[" + at + ".*.ragged]\n@layers = \"list2ragged.v1\"\n[" + at +
         ".*.embed]\n@layers = \"with_array.v1\"\n[" + at + ".*.embed.layer]\n@layers = \"HashEmbed.v1\"\n" +
         embed_arguments + "[" + at + ".*.pool]\n@layers = \"" + pool + "\"\n";
}

const std::string kTwoColumns = "[model]\n@layers = \"chain.v1\"\n[model.*.columns]\n@layers = \"concatenate.v1\"\n" +
                                column("model.*.columns.*.a", "nO = 8\nnV = 100\ncolumn = 0\n") +
                                column("model.*.columns.*.b", "nO = 4\nnV = 50\ncolumn = 1\nseed = 3\n") +
                                "[model.*.hidden]\n@layers = \"Relu.v1\"\nnO = 16\ndropout = 0.2\n"
                                "[model.*.out]\n@layers = \"Softmax.v1\"\n";

}  // namespace

TEST_CASE("a graph's table front is its HashEmbeds per column, pooled, and the layers after it are dense") {
  const auto model = model_of(kTwoColumns);
  CHECK(model_has_tables(model));
  auto split = split_table_graph(model.graph).value();
  REQUIRE(split.front.fields.size() == 2);
  CHECK(split.front.fields[0].width == 8);
  CHECK(split.front.fields[0].rows == 100);
  CHECK(split.front.fields[0].seed == 8);  // unset: 8 + column
  CHECK(split.front.fields[1].seed == 3);
  CHECK(split.front.fields[1].column == 1);
  CHECK(split.front.pooling == Pooling::mean);
  auto built = SparseModel::build(model, 3).value();
  CHECK(built.embedded_width() == 12);
  CHECK(built.dense().layout().describe() ==
        "relu1.W 16x12 @0\nrelu1.b 1x16 @192\nsoftmax1.W 3x16 @208\nsoftmax1.b 1x3 @256\n");
}

TEST_CASE("a graph with tables builds the model hashembed_mlp.v1 builds from the same numbers") {
  std::string text = "[model]\n@layers = \"chain.v1\"\n[model.*.columns]\n@layers = \"concatenate.v1\"\n" +
                     column("model.*.columns.*.a", "nO = 8\nnV = 100\ncolumn = 0\n", "reduce_sum.v1") +
                     column("model.*.columns.*.b", "nO = 4\nnV = 50\ncolumn = 1\n", "reduce_sum.v1");
  for (const char* name : {"one", "two"})
    text += std::string("[model.*.") + name + "]\n@layers = \"Relu.v1\"\nnO = 16\ndropout = 0.2\n";
  text += "[model.*.out]\n@layers = \"Softmax.v1\"\n";
  auto graph = SparseModel::build(model_of(text), 3).value();
  auto registered = SparseModel::build("hashembed_mlp.v1",
                                       {{"embedding_widths", std::vector<std::int64_t>{8, 4}},
                                        {"embedding_rows", std::vector<std::int64_t>{100, 50}},
                                        {"pooling", std::string("sum")},
                                        {"hidden_width", std::int64_t{16}}},
                                       3)
                        .value();
  CHECK(graph.dense().layout().hash() == registered.dense().layout().hash());
  REQUIRE(graph.fields().size() == registered.fields().size());
  for (std::size_t f = 0; f < graph.fields().size(); ++f) {
    CHECK(graph.fields()[f].seed == registered.fields()[f].seed);
    CHECK(graph.fields()[f].rows == registered.fields()[f].rows);
  }
  CHECK(graph.pooling() == registered.pooling());
}

TEST_CASE("a graph with tables elsewhere than at its front is refused in one line naming the layer") {
  const std::string late = "[model]\n@layers = \"chain.v1\"\n[model.*.hidden]\n@layers = \"Relu.v1\"\nnO = 4\n" +
                           column("model.*.late", "nO = 4\nnV = 10\n") + "[model.*.out]\n@layers = \"Softmax.v1\"\n";
  auto split = split_table_graph(model_of(late).graph);
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().find("model.*.hidden: Relu.v1: expected HashEmbed.v1 or Embed.v1 here") == 0);

  const std::string swapped = "[model]\n@layers = \"chain.v1\"\n[model.*.columns]\n@layers = \"concatenate.v1\"\n" +
                              column("model.*.columns.*.a", "nO = 8\nnV = 100\ncolumn = 1\n") +
                              column("model.*.columns.*.b", "nO = 4\nnV = 50\ncolumn = 0\n") +
                              "[model.*.out]\n@layers = \"Softmax.v1\"\n";
  split = split_table_graph(model_of(swapped).graph);
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().find("its i-th HashEmbed must have column = i") != std::string::npos);

  const std::string unpooled = "[model]\n@layers = \"chain.v1\"\n[model.*.embed]\n@layers = \"HashEmbed.v1\"\nnO = 4\n"
                               "nV = 10\n[model.*.out]\n@layers = \"Softmax.v1\"\n";
  split = split_table_graph(model_of(unpooled).graph);
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().find("model.*.out: Softmax.v1: expected with_array.v1, expand_window.v1 or a reduce after the "
                           "HashEmbed") == 0);
}

TEST_CASE("a graph with tables is not a matrix model, and a dense graph is not a tables model") {
  auto as_dense = Model::build(model_of(kTwoColumns), 10, 3);
  REQUIRE_FALSE(as_dense.ok());
  CHECK(as_dense.error().find("has embedding tables") != std::string::npos);
  auto dense = model_of("[model]\n@layers = \"chain.v1\"\n[model.*.out]\n@layers = \"Softmax.v1\"\n");
  CHECK_FALSE(model_has_tables(dense));
  auto as_tables = SparseModel::build(dense, 3);
  REQUIRE_FALSE(as_tables.ok());
  CHECK(as_tables.error().find("no embedding tables") != std::string::npos);
}

TEST_CASE("a HashEmbed's initializer section sets the range its rows are first drawn from, uniform_init or zero_init") {
  const auto with_initializer = [](const std::string& section) {
    return "[model]\n@layers = \"chain.v1\"\n[model.*.columns]\n@layers = \"concatenate.v1\"\n" +
           column("model.*.columns.*.a",
                  "nO = 8\nnV = 100\n" +
                      (section.empty() ? section : "[model.*.columns.*.a.*.embed.layer.initializer]\n" + section)) +
           "[model.*.out]\n@layers = \"Softmax.v1\"\n";
  };
  auto split = split_table_graph(model_of(with_initializer("@initializers = \"uniform_init.v1\"\nlo = -1\nhi = 0.5\n")).graph);
  REQUIRE_MESSAGE(split.ok(), split.error());
  CHECK(split->front.fields[0].low == -1.0f);
  CHECK(split->front.fields[0].high == 0.5f);
  split = split_table_graph(model_of(with_initializer("@initializers = \"zero_init.v1\"\n")).graph);
  REQUIRE(split.ok());
  CHECK(split->front.fields[0].low == 0.0f);
  CHECK(split->front.fields[0].high == 0.0f);
  // Without it, Thinc's default: uniform_init, -0.1 to 0.1.
  split = split_table_graph(model_of(with_initializer("")).graph);
  REQUIRE(split.ok());
  CHECK(split->front.fields[0].low == -0.1f);
  CHECK(split->front.fields[0].high == 0.1f);
  // Rows are drawn one at a time: a fan-scaled initializer is refused in one line naming it.
  split = split_table_graph(model_of(with_initializer("@initializers = \"he_normal_init.v1\"\n")).graph);
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().find("HashEmbed.v1: initializer: he_normal_init.v1 is not offered for table rows") !=
        std::string::npos);
}
