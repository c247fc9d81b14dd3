#include "model/hashembed_architecture.hpp"

#include <fmt/format.h>

namespace psgrad {

namespace {

constexpr double max_width = 1 << 20;
// Keys are a uint32 hash modulo the rows, so rows beyond 2^32 could never be reached.
constexpr double max_rows = 4294967296.0;
constexpr std::uint64_t max_seed = 4294967295u;

Result<EmbeddingFront> hashembed_front(const Settings& settings) {
  const auto& widths = get_integer_list(settings, "embedding_widths");
  const auto& rows = get_integer_list(settings, "embedding_rows");
  const auto first_seed = static_cast<std::uint64_t>(get_integer(settings, "seed"));
  if (rows.size() != widths.size())
    return Error{fmt::format("embedding_rows: expected one row count per field ({}, as embedding_widths), got {}",
                             widths.size(), rows.size())};
  if (first_seed + widths.size() - 1 > max_seed)
    return Error{fmt::format("seed: expected at most {} so that each of the {} fields' seeds fits in 32 bits, got {}",
                             max_seed - (widths.size() - 1), widths.size(), first_seed)};
  EmbeddingFront front;
  front.pooling = *pooling_named(get_text(settings, "pooling"));
  front.numbers = *number_scaling_named(get_text(settings, "numbers"));
  for (std::size_t i = 0; i < widths.size(); ++i) {
    HashEmbedSpec field;
    field.width = static_cast<std::size_t>(widths[i]);
    field.rows = static_cast<std::uint64_t>(rows[i]);
    field.seed = static_cast<std::uint32_t>(first_seed + i);
    field.column = i;
    front.fields.push_back(field);
  }
  return front;
}

}  // namespace

Architecture hashembed_mlp_architecture() {
  Architecture entry;
  entry.name = "hashembed_mlp.v1";
  entry.description =
      "One HashEmbed per field, pooled by reduce_sum or reduce_mean and concatenated, followed by the "
      "numeric columns, then Relu(hidden_width, dropout) >> Relu(hidden_width, dropout) >> Softmax.";
  entry.settings = {
      {"embedding_widths", SettingKind::integer_list, SettingValue{std::vector<std::int64_t>{64}},
       "Each field's embedding width (HashEmbed's nO), one entry per field.", 1.0, max_width},
      {"embedding_rows", SettingKind::integer_list, SettingValue{std::vector<std::int64_t>{5000}},
       "Each field's table rows (HashEmbed's nV), one entry per field.", 1.0, max_rows},
      {"seed", SettingKind::integer, SettingValue{std::int64_t{8}},
       "The first field's hash seed; field i hashes with seed + i, as spaCy's MultiHashEmbed numbers its "
       "HashEmbeds from 8.", 0.0, max_seed},
      {"pooling", SettingKind::text, SettingValue{std::string("mean")},
       "How a field's bag of id vectors becomes one row: reduce_sum or reduce_mean.", std::nullopt, std::nullopt,
       false, false, {"sum", "mean"}},
      {"numbers", SettingKind::text, SettingValue{std::string("as_is")},
       "How the numeric columns enter the first Relu after the embeddings: as_is, or log1p "
       "(sign(x) * log(1 + |x|), for counts).",
       std::nullopt, std::nullopt, false, false, {"as_is", "log1p"}},
      {"hidden_width", SettingKind::integer, SettingValue{std::int64_t{128}}, "Width of both hidden Relu layers.",
       1.0, max_width},
      {"dropout", SettingKind::number, SettingValue{0.2},
       "Dropout rate applied after each hidden activation while training.", 0.0, 1.0, true},
  };
  entry.tables = hashembed_front;
  // The chain behind the front is the tutorial's MLP, reading the same hidden_width and dropout.
  entry.build = [](const Settings& settings, std::size_t input_width, std::size_t output_width) {
    return find_architecture("relu_relu_softmax.v1")->build(settings, input_width, output_width);
  };
  return entry;
}

}  // namespace psgrad
