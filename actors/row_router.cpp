#include "actors/row_router.hpp"

#include <fmt/format.h>

#include "model/embedding_table.hpp"
#include "model/key_shards.hpp"

namespace psgrad {

namespace {

// The rows of `table` in an answer, or null when it has none.
const SparseRows* rows_of(const PulledRows& answer, std::size_t table) {
  for (const auto& entry : answer.tables)
    if (entry.table == table) return &entry.rows;
  return nullptr;
}

}  // namespace

std::vector<RowPull> split_pull(const BatchLookup& lookup, std::size_t shards, std::uint64_t version,
                                bool evaluation) {
  std::vector<RowPull> pulls(shards);
  for (auto& pull : pulls) {
    pull.version = version;
    pull.evaluation = evaluation;
  }
  for (std::size_t f = 0; f < lookup.fields.size(); ++f) {
    auto parts = split_keys(lookup.fields[f].keys, shards);
    for (std::size_t s = 0; s < shards; ++s)
      if (!parts[s].empty()) pulls[s].tables.push_back(TableKeys{static_cast<std::uint32_t>(f), std::move(parts[s])});
  }
  return pulls;
}

Result<std::vector<SparseRows>> join_pulled(const BatchLookup& lookup, const std::vector<HashEmbedSpec>& fields,
                                            const std::vector<PulledRows>& answers) {
  std::vector<SparseRows> rows;
  for (std::size_t f = 0; f < lookup.fields.size(); ++f) {
    const std::size_t width = fields.at(f).width;
    std::vector<SparseRows> none(answers.size());
    std::vector<const SparseRows*> parts(answers.size());
    for (std::size_t s = 0; s < answers.size(); ++s) {
      none[s].width = width;
      const auto* answered = rows_of(answers[s], f);
      parts[s] = answered ? answered : &none[s];
    }
    auto joined = join_rows(lookup.fields[f].keys, width, parts);
    if (!joined) return Error{fmt::format("field {}: {}", f, joined.error())};
    rows.push_back(std::move(joined).value());
  }
  return rows;
}

std::vector<RowPush> split_push(std::uint64_t version, std::uint32_t worker, const std::vector<SparseRows>& gradients,
                                std::size_t shards, bool with_squares) {
  std::vector<RowPush> pushes(shards);
  for (auto& push : pushes) {
    push.version = version;
    push.worker = worker;
  }
  for (std::size_t f = 0; f < gradients.size(); ++f) {
    const double squares = with_squares ? gradient_squares(gradients[f]) : 0.0;
    auto parts = split_rows(gradients[f], shards);
    for (std::size_t s = 0; s < shards; ++s) {
      if (parts[s].keys.empty()) continue;
      pushes[s].tables.push_back(TableRows{static_cast<std::uint32_t>(f), std::move(parts[s])});
      if (with_squares) pushes[s].squares.push_back(squares);
    }
  }
  return pushes;
}

std::vector<SparseRows> join_tables(const std::vector<PulledRows>& shards, const std::vector<std::size_t>& widths) {
  std::vector<SparseRows> tables;
  for (std::size_t t = 0; t < widths.size(); ++t) {
    std::vector<const SparseRows*> parts;
    for (const auto& shard : shards)
      if (const auto* rows = rows_of(shard, t)) parts.push_back(rows);
    tables.push_back(merge_rows(parts, widths[t]));
  }
  return tables;
}

}  // namespace psgrad
