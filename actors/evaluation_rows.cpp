#include "actors/evaluation_rows.hpp"

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/row_router.hpp"
#include "actors/table_parts.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

namespace {

// One pull's answers as they come in: per shard, per part of its pull.
struct Collected {
  std::vector<std::vector<PulledRows>> answers;
  std::size_t missing = 0;  // parts still to be answered
  bool done = false;        // answered, with rows or an error
  EvaluationRows::OnRows on_rows;
};

}  // namespace

EvaluationRows::EvaluationRows(SparseModel model, SparseBatch dev, BatchLookup lookup, EvaluatorTables tables,
                               std::vector<EmbeddingTable> seed_tables)
    : model_(std::move(model)),
      dev_(std::move(dev)),
      lookup_(std::move(lookup)),
      tables_(std::move(tables)),
      seed_tables_(std::move(seed_tables)) {}

Result<EvaluationRows> EvaluationRows::make(const TrainingJob& job, EvaluatorTables tables) {
  if (!tables.dev || tables.dev->count == 0) return Error{"no dev data to evaluate on"};
  auto model = SparseModel::build_for_data(job.model, *tables.dev, "dev data");
  if (!model) return Error{model.error()};
  auto batch = gather_examples(*tables.dev, {}, 0, tables.dev->count);
  auto lookup = model->look_up(batch.fields, batch.numbers);
  if (!lookup) return Error{"dev data: " + lookup.error()};
  std::vector<EmbeddingTable> seed_tables;
  if (job.cluster.mode != TrainingMode::sync)
    for (const auto& settings : seeded_table_settings(job, *model)) seed_tables.emplace_back(settings);
  return EvaluationRows(std::move(model).value(), std::move(batch), std::move(lookup).value(), std::move(tables),
                        std::move(seed_tables));
}

void EvaluationRows::pull(EvaluatorBase* self, std::uint64_t version, OnRows on_rows) {
  // Async, version 0: every row is still the one the seed makes, so the evaluator makes them itself
  // instead of pulling the whole dev set from the shards just as the workers ask for their first rows.
  if (!seed_tables_.empty() && version == 0) return on_rows(seed_rows());
  // Every shard is asked, those holding none of the dev set's keys too: a sync shard holds the step from
  // an evaluation point back until the evaluator has pulled at that version. The dev set's keys go in
  // parts (pull_parts.hpp), so no answer is too big to cross a connection at once.
  const auto& shards = tables_.shards;
  const auto pulls = split_pull(lookup_, shards.size(), version, true);
  auto collected = std::make_shared<Collected>();
  collected->on_rows = std::move(on_rows);
  collected->answers.resize(shards.size());
  std::vector<std::vector<RowPull>> parts;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    parts.push_back(cut_pull(pulls[s], tables_.keys_per_part));
    if (s < tables_.shards_on_this_host.size() && tables_.shards_on_this_host[s])
      for (auto& part : parts.back()) part.answer_through_shared_memory = true;
    collected->answers[s].resize(parts.back().size());
    collected->missing += parts.back().size();
  }
  auto fail = [collected](std::size_t shard, const std::string& why) {
    collected->done = true;
    collected->on_rows(Error{fmt::format("table shard {}: {}", shard, why)});
  };
  for (std::size_t s = 0; s < shards.size(); ++s)
    for (std::size_t p = 0; p < parts[s].size(); ++p)
      self->request(shards[s], caf::infinite, pull_atom::value, std::move(parts[s][p]))
          .then(
              [this, collected, fail, s, p](PulledRows& rows) {
                if (collected->done) return;
                if (!rows.refusal.empty()) return fail(s, rows.refusal);
                collected->answers[s][p] = std::move(rows);
                if (--collected->missing > 0) return;
                collected->done = true;
                std::vector<PulledRows> answers;
                for (std::size_t shard = 0; shard < collected->answers.size(); ++shard) {
                  auto joined = join_pull_answers(std::move(collected->answers[shard]));
                  if (!joined) return collected->on_rows(Error{fmt::format("table shard {}: {}", shard, joined.error())});
                  answers.push_back(std::move(joined).value());
                }
                collected->on_rows(join_pulled(lookup_, model_.fields(), answers));
              },
              [self, collected, fail, s](caf::error& error) {
                if (!collected->done) fail(s, error_text(self->system(), error));
              });
}

void EvaluationRows::tell_scored(EvaluatorBase* self, std::uint64_t version, bool best) const {
  for (const auto& shard : tables_.shards) self->send(shard, scored_atom::value, version, best);
}

// The dev set's rows as the seed makes them, per field.
std::vector<SparseRows> EvaluationRows::seed_rows() const {
  std::vector<SparseRows> rows;
  for (std::size_t f = 0; f < seed_tables_.size(); ++f) {
    SparseRows field(lookup_.fields[f].keys, seed_tables_[f].width());
    for (std::size_t i = 0; i < field.size(); ++i) seed_tables_[f].initial_row(field.keys[i], field.row(i));
    rows.push_back(std::move(field));
  }
  return rows;
}

}  // namespace psgrad
