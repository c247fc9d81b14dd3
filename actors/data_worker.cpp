#include "actors/data_worker.hpp"

#include <thread>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/result.hpp"
#include "caf/sec.hpp"
#include "actors/float_buffer.hpp"
#include "actors/wire_encoder.hpp"
#include "model/minibatcher.hpp"

namespace psgrad {

namespace {

class DataWorker : public DataWorkerActor::base {
 public:
  DataWorker(caf::actor_config& config, std::shared_ptr<DataWorkerSetup> setup,
             std::shared_ptr<Model> model)
      : DataWorkerActor::base(config),
        setup_(std::move(setup)),
        model_(std::move(model)),
        batches_(setup_->train, setup_->job.batch_size,
                 worker_data_seed(setup_->job.seed, setup_->worker_index)),
        dropout_rng_(worker_dropout_seed(setup_->job.seed, setup_->worker_index)),
        pool_(model_->parameter_count()),
        wire_(setup_->job.wire, model_->layout(), setup_->job.topk_fraction) {
    model_->reserve(setup_->job.batch_size);
    if (setup_->resume) {
      batches_.restore(setup_->resume->data);
      dropout_rng_.set_state(setup_->resume->dropout);
    }
  }

  behavior_type make_behavior() override {
    return {
        [this](compute_atom, Weights& weights) -> caf::result<Gradients> {
          return compute_gradients(weights);
        },
        [this](state_atom) -> WorkerStreamState {
          // A prefetched batch has not been used yet: a resumed stream must serve it again.
          return WorkerStreamState{static_cast<std::uint32_t>(setup_->worker_index),
                                   next_batch_ ? position_before_next_ : batches_.position(),
                                   dropout_rng_.state()};
        },
        [this](stop_atom) {
          quit();
          return true;
        },
    };
  }

 private:
  // Takes the weights by reference into the message so it can let go of them before answering: a
  // server that finds nobody else holding its weights then steps in place.
  caf::result<Gradients> compute_gradients(Weights& weights) {
    const auto& layout = model_->layout();
    if (const auto differs = layout.mismatch(weights.layout_hash, weights.values.size()))
      return caf::make_error(caf::sec::invalid_argument,
                             fmt::format("worker {}: weights do not fit the model layout ({})", setup_->worker_index,
                                         *differs));
    const auto batch = next_batch_ ? *next_batch_ : batches_.next();
    next_batch_.reset();
    Gradients gradients;
    gradients.version = weights.version;
    gradients.layout_hash = layout.hash();
    gradients.worker = static_cast<std::uint32_t>(setup_->worker_index);
    gradients.samples = static_cast<std::uint32_t>(batch.size);
    // Reads the received weights and writes into the outgoing payload: nothing is copied.
    auto buffer = pool_.acquire();
    gradients.loss =
        model_->compute_gradients(weights.values.data(), buffer->data(), batch.inputs, batch.targets, dropout_rng_);
    gradients.values = wire_.encode(std::move(buffer));  // wire: bf16-rounded or top-k compressed
    weights = Weights{};
    if (setup_->delay.count() > 0) std::this_thread::sleep_for(setup_->delay);
    // Answer first, then gather the next batch while the server works on this gradient.
    auto promise = make_response_promise<Gradients>();
    promise.deliver(std::move(gradients));
    position_before_next_ = batches_.position();
    next_batch_.emplace(batches_.next());
    return promise;
  }

  std::shared_ptr<DataWorkerSetup> setup_;
  std::shared_ptr<Model> model_;
  Minibatcher batches_;
  Random dropout_rng_;
  BufferPool pool_;
  GradientEncoder wire_;  // cluster.wire: the gradient as it is sent (topk: with this worker's residual)
  std::optional<Minibatcher::Batch> next_batch_;  // gathered ahead, not yet used
  Minibatcher::Position position_before_next_;
};

}  // namespace

Result<SpawnedDataWorker> spawn_data_worker(caf::actor_system& system, DataWorkerSetup setup) {
  if (!setup.train || setup.train->count == 0) return Error{"worker has no training data"};
  auto model = build_model(setup.job, setup.train->width, setup.train->num_classes);
  if (!model) return Error{model.error()};
  auto shared_model = std::make_shared<Model>(std::move(model).value());
  const auto layout_hash = shared_model->layout().hash();
  const bool detached = setup.detached;
  auto shared_setup = std::make_shared<DataWorkerSetup>(std::move(setup));
  // Detached: each worker computes on its own thread, so a busy scheduler thread never holds one
  // worker's request back while the others run ahead.
  if (detached)
    return SpawnedDataWorker{system.spawn<DataWorker, caf::detached>(shared_setup, std::move(shared_model)), layout_hash};
  return SpawnedDataWorker{system.spawn<DataWorker>(shared_setup, std::move(shared_model)), layout_hash};
}

}  // namespace psgrad
