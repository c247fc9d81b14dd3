#include "actors/worker_gradients.hpp"

#include <thread>

#include <fmt/format.h>

#include "caf/sec.hpp"
#include "payloads/refused_payload.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

WorkerGradients::WorkerGradients(const DataWorkerSetup& setup, ParameterLayout layout, std::shared_ptr<Model> model,
                                 std::optional<SparseModel> table_model,
                                 std::shared_ptr<const SparseDataset> table_train)
    : worker_index_(setup.worker_index),
      delay_(setup.delay),
      workspaces_(setup.workspaces),
      layout_(std::move(layout)),
      model_(std::move(model)),
      table_model_(std::move(table_model)),
      dropout_rng_(worker_dropout_seed(setup.job.training.seed, setup.worker_index)),
      outbox_(setup.job.cluster.wire, layout_, setup.job.cluster.topk_fraction) {
  const auto batch_size = setup.job.training.batch_size;
  const auto data_seed = worker_data_seed(setup.job.training.seed, setup.worker_index);
  if (table_model_) table_batches_.emplace(std::move(table_train), batch_size, data_seed);
  else batches_.emplace(setup.train, batch_size, data_seed);
  if (model_) model_->reserve(batch_size);
  if (setup.resume) {
    if (table_batches_) table_batches_->restore(setup.resume->data);
    else batches_->restore(setup.resume->data);
    dropout_rng_.set_state(setup.resume->dropout);
  }
}

std::string WorkerGradients::who() const { return fmt::format("worker {}", worker_index_); }

std::string WorkerGradients::check(const Weights& weights) const {
  if (weights.values.refused()) return weights.values.refusal("weights payload");
  if (const auto differs = layout_.mismatch(weights.layout_hash, weights.values.size()))
    return fmt::format("{}: weights do not fit the model layout ({})", who(), *differs);
  return {};
}

caf::error WorkerGradients::error_for(const Weights& weights, const std::string& reason) const {
  if (weights.values.refused()) return refused_payload_error(fmt::format("the {} it was sent", reason));
  return caf::make_error(caf::sec::invalid_argument, reason);
}

Gradients WorkerGradients::header(std::uint64_t version, std::size_t samples) const {
  Gradients gradients;
  gradients.version = version;
  gradients.layout_hash = layout_.hash();
  gradients.worker = static_cast<std::uint32_t>(worker_index_);
  gradients.samples = static_cast<std::uint32_t>(samples);
  return gradients;
}

void WorkerGradients::seal_timing(Gradients& gradients, std::int64_t received) {
  if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
  gradients.timing = WorkTiming{previous_answered_, idle_since_, received, steady_now_ns()};
  previous_answered_ = gradients.timing.answered;
}

caf::expected<Gradients> WorkerGradients::from_next_batch(Weights& weights, bool in_place, bool whole) {
  const auto received = steady_now_ns();
  if (auto reason = check(weights); !reason.empty()) return error_for(weights, reason);
  const auto batch = next_batch_ ? *next_batch_ : batches_->next();
  next_batch_.reset();
  Gradients gradients = header(weights.version, batch.size);
  // Reads the received weights and writes into the outgoing payload: nothing is copied.
  float* target = outbox_.open(in_place);
  auto compute = [&](Model& model) {
    return model.compute_gradients(weights.values.data(), target, batch.inputs, batch.targets, dropout_rng_);
  };
  gradients.loss = workspaces_ ? compute(workspaces_->borrow().model()) : compute(*model_);
  gradients.values = outbox_.seal(whole);
  weights = Weights{};
  seal_timing(gradients, received);
  return gradients;
}

void WorkerGradients::prefetch() {
  // With tables its next batch comes with its rows (pull_next).
  if (table_model_ || next_batch_) return;
  position_before_next_ = batches_->position();
  next_batch_.emplace(batches_->next());
  mark_idle();
}

WorkerRows::StepHandle WorkerGradients::pull_next(WorkerRows& rows, std::uint64_t version) {
  return rows.pull(*table_batches_, *table_model_, version);
}

caf::expected<Gradients> WorkerGradients::from_rows(Weights& weights, const WorkerRows::Step& step,
                                                    const WorkerRows& rows, std::int64_t received, bool in_place,
                                                    bool whole, std::vector<SparseRows>& row_gradients) {
  auto pulled = rows.rows_of(step, *table_model_);
  if (!pulled) return caf::make_error(caf::sec::invalid_argument, pulled.error());
  Gradients gradients = header(weights.version, step.batch.size);
  float* target = outbox_.open(in_place);
  const auto& targets = step.batch.targets;
  gradients.loss = table_model_->compute_gradients(weights.values.data(), target, step.lookup, *pulled,
                                                   ConstMatrixMap(targets.data(), targets.rows(), targets.cols()),
                                                   dropout_rng_, row_gradients);
  gradients.values = outbox_.seal(whole);
  weights = Weights{};
  seal_timing(gradients, received);
  return gradients;
}

void WorkerGradients::mark_idle() { idle_since_ = steady_now_ns(); }

WorkerStreamState WorkerGradients::state(const WorkerRows::Step* pulled_ahead) const {
  const auto position = pulled_ahead ? pulled_ahead->position
                        : table_batches_ ? table_batches_->position()
                        : next_batch_ ? position_before_next_ : batches_->position();
  return WorkerStreamState{static_cast<std::uint32_t>(worker_index_), position, dropout_rng_.state()};
}

}  // namespace psgrad
