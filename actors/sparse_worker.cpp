#include "actors/sparse_worker.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/sec.hpp"
#include "actors/answer_watch.hpp"
#include "actors/row_router.hpp"
#include "actors/server_group.hpp"
#include "model/buffer_pool.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"
#include "payloads/shared_memory.hpp"
#include "payloads/wire_encoder.hpp"
#include "runtime/error_text.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

namespace {

// To itself: time to check that no server or table shard owes an answer for too long (see watch_peers).
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using SparseWorkerSelf = DataWorkerActor::extend<caf::reacts_to<watch_atom>>;

class SparseWorker : public SparseWorkerSelf::base {
 public:
  SparseWorker(caf::actor_config& config, std::shared_ptr<SparseWorkerSetup> setup, SparseModel model)
      : SparseWorkerSelf::base(config),
        setup_(std::move(setup)),
        model_(std::move(model)),
        batches_(setup_->train, setup_->job.training.batch_size,
                 worker_data_seed(setup_->job.training.seed, setup_->worker_index)),
        dropout_rng_(worker_dropout_seed(setup_->job.training.seed, setup_->worker_index)),
        pool_(model_.dense().layout().total_size()),
        wire_(setup_->job.cluster.wire, model_.dense().layout(), setup_->job.cluster.topk_fraction),
        delay_(worker_delay(setup_->job, setup_->worker_index)),
        shard_answers_(setup_->shards.size()) {
    if (setup_->resume) {
      batches_.restore(setup_->resume->data);
      dropout_rng_.set_state(setup_->resume->dropout);
    }
  }

  behavior_type make_behavior() override {
    return {
        [](compute_atom, Weights&) -> caf::result<Gradients> {
          return caf::make_error(caf::sec::invalid_argument,
                                 "a sparse worker computes only in its own push/pull loop (train)");
        },
        [this](train_atom, Weights& weights, std::vector<ParameterServerActor>& servers,
               std::uint64_t credits) -> caf::result<bool> {
          servers_.emplace(std::move(servers));
          servers_->use_shared_memory_with(setup_->shared_memory_nodes);
          credits_ = credits;
          fed_ = weights.version;
          training_ = make_response_promise<bool>();
          loop_ = Loop::computing;
          if (sync()) servers_->push_without_squares();
          servers_->prepare(
              this, setup_->job.cluster.request_timeout, [this, weights]() mutable { on_weights(std::move(weights)); },
              [this](const std::string& who, const caf::error& error) { end_loop(who, error); });
          watch_peers();
          return training_;
        },
        [this](watch_atom) {
          watching_ = false;
          watch_peers();
        },
        [this](until_atom, std::uint64_t version) {
          until_ = version;
          keep_computing();
        },
        [this](credit_atom, std::uint64_t credits) {
          credits_ += credits;
          if (loop_ != Loop::waiting_for_credit || credits_ == 0) return keep_computing();
          // The weights held while waiting are stale by now: start from the servers' newest.
          loop_ = Loop::computing;
          latest_.reset();
          servers_->request(
              this, setup_->job.cluster.request_timeout, [this](Weights weights) { on_weights(std::move(weights)); },
              [this](const std::string& who, const caf::error& error) { end_loop(who, error); },
              weights_atom::value);
        },
        [](clock_atom) { return steady_now_ns(); },
        [this](fed_atom) { return fed_; },
        [this](state_atom) {
          // A batch pulled ahead but not started is not yet taken: a resumed run starts with it.
          const auto position = prefetched_ ? prefetched_->position : batches_.position();
          return WorkerStreamState{static_cast<std::uint32_t>(setup_->worker_index), position, dropout_rng_.state()};
        },
        [this](stop_atom) {
          if (loop_ != Loop::idle) training_.deliver(true);
          loop_ = Loop::idle;
          quit();
          return true;
        },
    };
  }

 private:
  // One batch from lookup to push: its rows come from several shards, in any order. Async, the next
  // batch's rows are pulled while the servers answer this one's gradient, so a step seldom waits for
  // its rows; it starts once it has its weights too.
  struct Step {
    Weights weights;
    bool started = false;  // it has its weights
    SparseBatch batch;
    SparseBatcher::Position position;  // the stream's before this batch
    BatchLookup lookup;
    std::vector<PulledRows> answers;  // per shard
    std::size_t missing = 0;          // answers still to come
    std::int64_t received = 0;
    // A pull ahead keeps its failure until the step starts: a run ending meanwhile never needs it.
    std::optional<std::pair<std::string, caf::error>> failure;
  };

  // The servers' and shards' handles would keep them alive: let go.
  void on_exit() override {
    prefetched_.reset();
    servers_.reset();
    setup_->shards.clear();
  }

  bool sync() const { return setup_->job.cluster.mode == TrainingMode::sync; }
  // fp32 pushes to a server process on this host; bf16 or top-k are encoded in a buffer of its own.
  bool pushes_in_place() const {
    return setup_->job.cluster.wire == WireEncoding::fp32 && servers_ && servers_->first_through_shared_memory();
  }
  std::size_t shard_count() const { return setup_->shards.size(); }
  bool on_this_host(std::size_t shard) const {
    return shard < setup_->shards_on_this_host.size() && setup_->shards_on_this_host[shard];
  }
  std::string who() const { return fmt::format("worker {}", setup_->worker_index); }

  void on_weights(Weights weights) {
    if (loop_ == Loop::idle) return;
    latest_ = std::move(weights);
    keep_computing();
  }

  // One batch at a time: sync, only from weights older than the driver's stopping point; async, while
  // it holds credits.
  void keep_computing() {
    if (loop_ == Loop::idle || in_step_ || !latest_) return;
    if (sync() && latest_->version >= until_) return;
    if (!sync()) {
      if (credits_ == 0) {
        loop_ = Loop::waiting_for_credit;
        return;
      }
      --credits_;
    }
    in_step_ = true;
    Weights weights = std::move(*latest_);
    latest_.reset();
    start_step(std::move(weights));
  }

  void start_step(Weights weights) {
    if (const auto differs = model_.dense().layout().mismatch(weights.layout_hash, weights.values.size()))
      return end_loop(who(), caf::make_error(caf::sec::invalid_argument,
                                             fmt::format("weights do not fit the model layout ({})", *differs)));
    // Its push feeds the next version from now on: a driver settling a stop asks while the rows are out.
    fed_ = weights.version + 1;
    std::shared_ptr<Step> step = std::move(prefetched_);
    prefetched_.reset();
    if (!step) step = pull_next_batch(weights.version);
    step->received = steady_now_ns();
    step->weights = std::move(weights);
    step->started = true;
    if (step->failure) return end_loop(step->failure->first, step->failure->second);
    if (step->missing == 0) finish_step(step);
  }

  // The next batch's lookup and the pulls of its rows.
  std::shared_ptr<Step> pull_next_batch(std::uint64_t version) {
    auto step = std::make_shared<Step>();
    step->position = batches_.position();
    step->batch = batches_.next();
    auto lookup = model_.look_up(step->batch.fields, step->batch.numbers);
    if (!lookup) {
      step->failure.emplace(who(), caf::make_error(caf::sec::invalid_argument, lookup.error()));
      return step;
    }
    step->lookup = std::move(lookup).value();
    step->answers.resize(shard_count());
    auto pulls = split_pull(step->lookup, shard_count(), version, false);
    for (const auto& pull : pulls) step->missing += pull.tables.empty() ? 0 : 1;
    for (std::size_t s = 0; s < shard_count(); ++s) {
      if (pulls[s].tables.empty()) continue;
      pulls[s].answer_through_shared_memory = on_this_host(s);
      // No CAF timeout: watch_peers times the answer, as a server's.
      shard_answers_.asked(s, steady_now_ns());
      request(setup_->shards[s], caf::infinite, pull_atom::value, std::move(pulls[s]))
          .then(
              [this, step, s](PulledRows& rows) {
                shard_answers_.answered(s, steady_now_ns());
                if (!rows.refusal.empty())
                  return pull_failed(*step, s, caf::make_error(caf::sec::invalid_argument, rows.refusal));
                step->answers[s] = std::move(rows);
                if (--step->missing == 0 && step->started && !step->failure) finish_step(step);
              },
              [this, step, s](caf::error& error) {
                shard_answers_.answered(s, steady_now_ns());
                pull_failed(*step, s, error);
              });
    }
    return step;
  }

  // A step already started ends the loop; a pull ahead keeps its failure until its step starts.
  void pull_failed(Step& step, std::size_t shard, const caf::error& error) {
    if (step.started) return end_loop(fmt::format("table shard {}", shard), error);
    if (!step.failure) step.failure.emplace(fmt::format("table shard {}", shard), error);
  }

  void finish_step(const std::shared_ptr<Step>& step) {
    if (loop_ == Loop::idle) return;
    auto rows = join_pulled(step->lookup, model_.fields(), step->answers);
    if (!rows) return end_loop(who(), caf::make_error(caf::sec::invalid_argument, rows.error()));
    const auto layout_hash = model_.dense().layout().hash();
    Gradients gradients;
    gradients.version = step->weights.version;
    gradients.layout_hash = layout_hash;
    gradients.worker = static_cast<std::uint32_t>(setup_->worker_index);
    gradients.samples = static_cast<std::uint32_t>(step->batch.size);
    // A push through shared memory is computed in the slot it is sent from (as a dense worker's).
    const std::size_t size = model_.dense().layout().total_size();
    std::shared_ptr<void> slot = pushes_in_place() ? reserve_in_shared_memory(size * sizeof(float)) : nullptr;
    std::shared_ptr<AlignedFloats> buffer = slot ? nullptr : pool_.acquire();
    float* target = slot ? static_cast<float*>(slot.get()) : buffer->data();
    const auto& targets = step->batch.targets;
    std::vector<SparseRows> row_gradients;
    gradients.loss = model_.compute_gradients(step->weights.values.data(), target, step->lookup, *rows,
                                              ConstMatrixMap(targets.data(), targets.rows(), targets.cols()),
                                              dropout_rng_, row_gradients);
    if (slot) {
      gradients.values = FloatBuffer(std::shared_ptr<const float>(slot, target), size);
      if (servers_->size() == 1) gradients.values = gradients.values.with_checksum();
    } else {
      gradients.values = wire_.encode(std::move(buffer));
    }
    step->weights = Weights{};  // a server that finds nobody else holding its weights steps in place
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    gradients.timing = WorkTiming{previous_answered_, idle_since_, step->received, steady_now_ns()};
    previous_answered_ = gradients.timing.answered;
    // Every shard gets a push, an empty one too: a sync step waits for every worker's.
    auto pushes = split_push(gradients.version, gradients.worker, row_gradients, shard_count(), !sync());
    for (std::size_t s = 0; s < shard_count(); ++s) {
      pushes[s].through_shared_memory = on_this_host(s);
      shard_answers_.asked(s, steady_now_ns());
      request(setup_->shards[s], caf::infinite, push_rows_atom::value, std::move(pushes[s]))
          .then([this, s](bool) { shard_answers_.answered(s, steady_now_ns()); },
                [this, s](caf::error& error) {
                  shard_answers_.answered(s, steady_now_ns());
                  end_loop(fmt::format("table shard {}", s), error);
                });
    }
    const auto version = gradients.version;
    servers_->apply(
        this, caf::infinite,
        [this](Weights next) {
          // Before any work on them: a sync step's rows are pulled after this handler returns.
          if (servers_->wants_receipt(setup_->job.cluster, node(), next))
            servers_->send_receipts(this, static_cast<std::uint32_t>(setup_->worker_index), next.version);
          in_step_ = false;
          fed_ = next.version;
          idle_since_ = steady_now_ns();
          on_weights(std::move(next));
        },
        [this](const std::string& server, const caf::error& error) { end_loop(server, error); },
        std::move(gradients));
    // Sync steps pull the rows of the version they compute with, known only with their weights. Async
    // rows are as they are: pulled after this push (a shard answers its messages in order), they hold it.
    if (!sync()) prefetched_ = pull_next_batch(version);
  }

  // While the loop runs, a tick ends it once a server or table shard has owed an answer for longer than
  // the request timeout, with the dense worker's allowance: sync, an answer waits for every worker's
  // push, so three times that.
  void watch_peers() {
    if (loop_ == Loop::idle || !servers_ || watching_) return;
    const auto timeout = sync() ? 3 * setup_->job.cluster.request_timeout : setup_->job.cluster.request_timeout;
    const auto silent_error = [&] {
      return caf::make_error(caf::sec::request_timeout, fmt::format("no answer within {} ms", timeout.count()));
    };
    if (const auto server = servers_->silent_server(timeout)) return end_loop(*server, silent_error());
    if (const auto shard = shard_answers_.silent(steady_now_ns(), timeout))
      return end_loop(fmt::format("table shard {}", *shard), silent_error());
    watching_ = true;
    delayed_send(this, watch_interval(timeout), watch_atom::value);
  }

  // The loop's answer carries who refused and why, in words, since the driver did not ask them itself.
  void end_loop(const std::string& source, const caf::error& error) {
    if (loop_ == Loop::idle) return;
    loop_ = Loop::idle;
    training_.deliver(
        caf::make_error(caf::sec::runtime_error, fmt::format("{}: {}", source, error_text(system(), error))));
  }

  std::shared_ptr<SparseWorkerSetup> setup_;
  SparseModel model_;
  SparseBatcher batches_;
  Random dropout_rng_;
  BufferPool pool_;
  GradientEncoder wire_;  // cluster.wire: the dense gradient as it is sent
  std::chrono::milliseconds delay_;
  std::optional<ServerGroup> servers_;
  AnswerWatch shard_answers_;  // pulls and pushes each table shard owes
  bool watching_ = false;      // a watch tick is on its way
  caf::typed_response_promise<bool> training_;
  std::uint64_t credits_ = 0;  // async/ssp: batches it may still start
  std::uint64_t until_ = 0;    // sync: it computes only from weights older than this version
  std::uint64_t fed_ = 0;      // sync: the version its last push is for
  std::optional<Weights> latest_;
  std::shared_ptr<Step> prefetched_;  // async: the next batch, its rows pulled ahead
  bool in_step_ = false;  // a batch is between its lookup and the servers' answer
  enum class Loop { idle, computing, waiting_for_credit };
  Loop loop_ = Loop::idle;
  std::int64_t previous_answered_ = 0;
  std::int64_t idle_since_ = 0;
};

}  // namespace

Result<DataWorkerActor> spawn_sparse_worker(caf::actor_system& system, SparseWorkerSetup setup) {
  if (!setup.train || setup.train->count == 0) return Error{"worker has no training data"};
  if (setup.shards.empty()) return Error{"a sparse worker needs at least one table shard"};
  auto model = SparseModel::build_for_data(setup.job.model, *setup.train,
                                           "training data");
  if (!model) return Error{model.error()};
  DataWorkerActor worker =
      system.spawn<SparseWorker>(std::make_shared<SparseWorkerSetup>(std::move(setup)), std::move(model).value());
  return worker;
}

}  // namespace psgrad
