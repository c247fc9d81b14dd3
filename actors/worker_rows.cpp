#include "actors/worker_rows.hpp"

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/sec.hpp"
#include "actors/row_router.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

WorkerRows::WorkerRows(DataWorkerBase* self, WorkerTables tables, std::size_t worker_index, OnRows on_rows,
                       OnFailure on_failure)
    : self_(self),
      tables_(std::move(tables)),
      worker_index_(static_cast<std::uint32_t>(worker_index)),
      on_rows_(std::move(on_rows)),
      on_failure_(std::move(on_failure)),
      answers_(tables_.shards.size()) {}

WorkerRows::StepHandle WorkerRows::pull(SparseBatcher& batches, SparseModel& model, std::uint64_t version) {
  auto step = std::make_shared<Step>();
  step->position = batches.position();
  step->batch = batches.next();
  auto lookup = model.look_up(step->batch.fields, step->batch.numbers);
  if (!lookup) {
    step->failure.emplace(fmt::format("worker {}", worker_index_),
                          caf::make_error(caf::sec::invalid_argument, lookup.error()));
    return step;
  }
  step->lookup = std::move(lookup).value();
  const std::size_t shards = tables_.shards.size();
  step->answers.resize(shards);
  auto pulls = split_pull(step->lookup, shards, version, false);
  for (const auto& pull : pulls) step->missing += pull.tables.empty() ? 0 : 1;
  for (std::size_t s = 0; s < shards; ++s) {
    if (pulls[s].tables.empty()) continue;
    pulls[s].answer_through_shared_memory = on_this_host(s);
    // No CAF timeout: the worker's watch times the answer (silent_shard), as a server's.
    answers_.asked(s, steady_now_ns());
    self_->request(tables_.shards[s], caf::infinite, pull_atom::value, std::move(pulls[s]))
        .then(
            [this, step, s](PulledRows& rows) {
              answers_.answered(s, steady_now_ns());
              if (!rows.refusal.empty())
                return pull_failed(*step, s, caf::make_error(caf::sec::invalid_argument, rows.refusal));
              step->answers[s] = std::move(rows);
              if (--step->missing == 0 && step->started && !step->failure) on_rows_(step);
            },
            [this, step, s](caf::error& error) {
              answers_.answered(s, steady_now_ns());
              pull_failed(*step, s, error);
            });
  }
  return step;
}

void WorkerRows::start(const StepHandle& step) {
  step->started = true;
  if (step->failure) return on_failure_(step->failure->first, step->failure->second);
  if (step->missing == 0) on_rows_(step);
}

// A step already started ends the loop; a pull ahead keeps its failure until its step starts.
void WorkerRows::pull_failed(Step& step, std::size_t shard, const caf::error& error) {
  if (step.started) return on_failure_(fmt::format("table shard {}", shard), error);
  if (!step.failure) step.failure.emplace(fmt::format("table shard {}", shard), error);
}

Result<std::vector<SparseRows>> WorkerRows::rows_of(const Step& step, const SparseModel& model) const {
  return join_pulled(step.lookup, model.fields(), step.answers);
}

void WorkerRows::push(std::uint64_t version, const std::vector<SparseRows>& row_gradients, bool with_squares) {
  const std::size_t shards = tables_.shards.size();
  auto pushes = split_push(version, worker_index_, row_gradients, shards, with_squares);
  for (std::size_t s = 0; s < shards; ++s) {
    pushes[s].through_shared_memory = on_this_host(s);
    answers_.asked(s, steady_now_ns());
    self_->request(tables_.shards[s], caf::infinite, push_rows_atom::value, std::move(pushes[s]))
        .then([this, s](bool) { answers_.answered(s, steady_now_ns()); },
              [this, s](caf::error& error) {
                answers_.answered(s, steady_now_ns());
                on_failure_(fmt::format("table shard {}", s), error);
              });
  }
}

std::optional<std::size_t> WorkerRows::silent_shard(std::chrono::nanoseconds timeout) const {
  return answers_.silent(steady_now_ns(), timeout);
}

}  // namespace psgrad
