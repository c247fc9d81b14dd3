#include "actors/data_worker.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/result.hpp"
#include "caf/sec.hpp"
#include "actors/answer_watch.hpp"
#include "runtime/error_text.hpp"
#include "payloads/float_buffer.hpp"
#include "payloads/refused_payload.hpp"
#include "runtime/help_backoff.hpp"
#include "runtime/network_thread.hpp"
#include "actors/server_group.hpp"
#include "runtime/steady_time.hpp"
#include "payloads/wire_encoder.hpp"
#include "model/minibatcher.hpp"

namespace psgrad {

namespace {

// To itself: time to check that no server owes an answer for too long (see watch_servers).
using watch_atom = caf::atom_constant<caf::atom("watch")>;
// To itself, on the network thread: carry on after a push (see keep_computing).
using continue_atom = caf::atom_constant<caf::atom("continue")>;
using DataWorkerSelf = DataWorkerActor::extend<caf::reacts_to<watch_atom>, caf::reacts_to<continue_atom>>;

// The longest gradient a worker computes on its process's network thread (see DataWorker::subtype).
constexpr std::chrono::milliseconds kNetworkThreadGradient{10};

class DataWorker : public DataWorkerSelf::base {
 public:
  // `model` is null when the worker borrows one per gradient (setup->workspaces); `layout` is its
  // model's either way.
  DataWorker(caf::actor_config& config, std::shared_ptr<DataWorkerSetup> setup, ParameterLayout layout,
             std::shared_ptr<Model> model)
      : DataWorkerSelf::base(config),
        setup_(std::move(setup)),
        layout_(std::move(layout)),
        model_(std::move(model)),
        batches_(setup_->train, setup_->job.training.batch_size,
                 worker_data_seed(setup_->job.training.seed, setup_->worker_index)),
        dropout_rng_(worker_dropout_seed(setup_->job.training.seed, setup_->worker_index)),
        pool_(layout_.total_size()),
        wire_(setup_->job.cluster.wire, layout_, setup_->job.cluster.topk_fraction) {
    if (model_) model_->reserve(setup_->job.training.batch_size);
    if (setup_->resume) {
      batches_.restore(setup_->resume->data);
      dropout_rng_.set_state(setup_->resume->dropout);
    }
  }

  // In a worker process, weights and credit from the server run on the network thread that read them
  // (network_thread.hpp) while gradients take under kNetworkThreadGradient: the hand-offs cost about
  // 0.1-0.2 ms, and a longer handler would hold back the process's heartbeats. Measured, 2 worker
  // processes over loopback, alternated, medians of 4, against the server alone on its network
  // thread: sync 207k samples/s against 180k, async 187k against 178k.
  subtype_t subtype() const override {
    return network_thread_subtype(on_network_thread_.load(std::memory_order_relaxed));
  }

  behavior_type make_behavior() override {
    return {
        [this](compute_atom, Weights& weights) -> caf::result<Gradients> {
          auto gradients = gradients_from(weights);
          if (!gradients) return std::move(gradients.error());
          // Answer first, then gather the next batch while the server works on this gradient.
          auto promise = make_response_promise<Gradients>();
          promise.deliver(std::move(*gradients));
          prefetch();
          return promise;
        },
        [this](train_atom, Weights& weights, std::vector<ParameterServerActor>& servers,
               std::uint64_t credits) -> caf::result<bool> {
          servers_.emplace(std::move(servers));
          servers_->use_shared_memory_with(setup_->shared_memory_nodes);
          credits_ = credits;
          fed_ = weights.version;
          training_ = make_response_promise<bool>();
          loop_ = Loop::computing;
          watch_servers();
          // Shards first say what they hold, so each push sends each only its part.
          if (setup_->job.cluster.mode == TrainingMode::sync) servers_->push_without_squares();
          servers_->prepare(
              this, setup_->job.cluster.request_timeout, [this, weights]() mutable { on_weights(std::move(weights)); },
              [this](const std::string& who, const caf::error& error) { end_loop(who, error); });
          return training_;
        },
        [this](until_atom, std::uint64_t version) {
          // A signal moves the stop nearer than the one the worker was told: it stops there, or after
          // the pushes it has sent already.
          if (version > until_) drained_at_ = until_;
          until_ = version;
          if (loop_ != Loop::idle) keep_computing();
        },
        [this](credit_atom, std::uint64_t credits) {
          credits_ += credits;
          if (loop_ == Loop::idle || credits_ == 0) return;
          if (loop_ != Loop::waiting_for_credit) return keep_computing();
          // The weights held while waiting are stale by now: start from the servers' newest.
          loop_ = Loop::computing;
          latest_.reset();
          // No CAF timeout: watch_servers times the answer, as a push's.
          servers_->request(
              this, caf::infinite, [this](Weights weights) { on_weights(std::move(weights)); },
              [this](const std::string& who, const caf::error& error) { end_loop(who, error); },
              weights_atom::value);
        },
        [this](continue_atom) {
          if (!next_batch_) prefetch();
          if (loop_ != Loop::idle) keep_computing();
        },
        [this](watch_atom) {
          watching_ = false;
          watch_servers();
        },
        [](clock_atom) { return steady_now_ns(); },
        [this](fed_atom) { return fed_; },
        [this](state_atom) -> WorkerStreamState {
          // A prefetched batch has not been used yet: a resumed stream must serve it again.
          return WorkerStreamState{static_cast<std::uint32_t>(setup_->worker_index),
                                   next_batch_ ? position_before_next_ : batches_.position(),
                                   dropout_rng_.state()};
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
  // The servers' handles would keep them (and, through their listener, the driver) alive: let go.
  void on_exit() override { servers_.reset(); }

  // -- the push/pull loop: worker -> servers -> worker; the driver only hands out credits (async/ssp) or
  // moves the stopping point (sync) --
  // The first weights, freshly pulled ones, or a push's answer.
  void on_weights(Weights weights) {
    if (loop_ == Loop::idle) return;
    latest_ = std::move(weights);
    latest_unused_ = true;
    keep_computing();
  }

  // Sync with cluster.ordered_answers and servers on another host: each server sends the next
  // worker's answer once this one says it has its own, so it says so before it computes (on the
  // network thread a message leaves only after the handler returns, hence the continue message).
  // Answers through shared memory (same host) are never held back, so they need no receipt.
  bool acknowledges(const Weights& answer) const {
    return servers_ && servers_->wants_receipt(setup_->job.cluster, node(), answer);
  }

  // Pipelined, an answer that comes while the one before waits for that continue message is kept for
  // the push after, as if each had been taken on arrival: a push feeds the step two after the one
  // whose weights it starts from, whatever the timing, so runs end with the same weights.
  void on_answer_to_acknowledge(Weights weights) {
    if (loop_ == Loop::idle) return;
    servers_->send_receipts(this, static_cast<std::uint32_t>(setup_->worker_index), weights.version);
    if (setup_->job.cluster.pipeline && latest_unused_) {
      newer_ = std::move(weights);
    } else {
      latest_ = std::move(weights);
      latest_unused_ = true;
    }
    if (running_on_network_thread(*this)) return send(this, continue_atom::value);
    keep_computing();
  }

  // Pipelined sync: the weights after those just computed from, if an answer brought them meanwhile.
  void take_newer() {
    latest_unused_ = false;
    if (!newer_) return;
    latest_ = std::move(newer_);
    newer_.reset();
    latest_unused_ = true;
  }

  // Computes and pushes while it holds credits and weights, with one push out at a time, or two with
  // cluster.pipeline: then the next gradient starts from the newest weights at hand instead of waiting
  // for the answer to the last push, which hides the round trip at one more step of staleness. In sync
  // each push feeds the next step after the one its last push fed.
  void keep_computing() {
    const bool sync = setup_->job.cluster.mode == TrainingMode::sync;
    const std::size_t depth = setup_->job.cluster.pipeline ? 2 : 1;
    while (loop_ != Loop::idle && latest_ && pushes_out_ < depth) {
      // Sync: the weights of the driver's stopping point are kept; they are the newest there are.
      // Pipelined, no push feeds a step past it, so none is out there.
      if (sync && (depth == 1 ? latest_->version : fed_) >= until_) return;
      // Pipelined sync: the first pushes after a stopping point come from its weights. The driver's
      // word to go on may come before the answers that carry them: a shard in another process
      // answers over a connection of its own.
      if (sync && depth == 2 && latest_->version < drained_at_) {
        if (newer_) {
          take_newer();
          continue;
        }
        if (pushes_out_ > 0) return;
      }
      if (!sync && credits_ == 0) {
        loop_ = pushes_out_ == 0 ? Loop::waiting_for_credit : Loop::computing;
        return;
      }
      if (!sync) --credits_;
      // Without the pipeline the weights are let go before the push, so the server may step in place.
      Weights from = *latest_;
      if (depth == 1) latest_.reset();
      take_newer();
      auto gradients = gradients_from(from);
      if (!gradients) return end_loop(fmt::format("worker {}", setup_->worker_index), gradients.error());
      const std::chrono::nanoseconds took{gradients->timing.answered - gradients->timing.received};
      on_network_thread_.store(took < kNetworkThreadGradient, std::memory_order_relaxed);
      ++pushes_out_;
      ++fed_;
      // No CAF timeout: watch_servers times the answer.
      servers_->apply(
          this, caf::infinite,
          [this](Weights next) {
            --pushes_out_;
            // An answer has the version of the step its push fed (or, dropped, the current one): a push
            // still out feeds the step after it.
            fed_ = next.version + pushes_out_;
            if (acknowledges(next)) return on_answer_to_acknowledge(std::move(next));
            on_weights(std::move(next));
          },
          [this](const std::string& who, const caf::error& error) { end_loop(who, error); }, std::move(*gradients));
      // On the network thread the push leaves only once this handler has returned (the multiplexer
      // writes it next, with scheduler.max-throughput 1 before this worker's next message): the
      // next batch and gradient come in a message of their own.
      if (running_on_network_thread(*this)) return send(this, continue_atom::value);
      prefetch();
      if (pushes_out_ == depth && setup_->help && help_backoff_.watch_now()) help_backoff_.record(help_with_step());
    }
  }

  // Its core would idle until the answer comes: it takes on half of each pass of the step that answer
  // waits for, if the server offers one soon (the server's thread may have to wake first). True when
  // it took a half.
  bool help_with_step() { return setup_->help->watch(kStepHelpWait, kNextPassWait); }

  // While the loop runs, a tick (watch_interval) ends it once a server has owed an answer for longer
  // than the push timeout. Sync: the answer waits for every worker's gradient, and for the driver to drop a
  // frozen one (after request_timeout), so a push allows three times that before giving up. Time the
  // server process is silent is not counted: the process waits for it as a whole (cluster.server_wait_ms).
  void watch_servers() {
    if (loop_ == Loop::idle || !servers_ || watching_) return;
    if (setup_->server_silence && setup_->server_silence->silent()) servers_->restart_answer_clocks();
    const auto timeout = setup_->job.cluster.mode == TrainingMode::sync ? 3 * setup_->job.cluster.request_timeout
                                                                 : setup_->job.cluster.request_timeout;
    if (const auto silent = servers_->silent_server(timeout))
      return end_loop(*silent, caf::make_error(caf::sec::request_timeout,
                                               fmt::format("no answer within {} ms", timeout.count())));
    watching_ = true;
    delayed_send(this, watch_interval(timeout), watch_atom::value);
  }

  // The loop's answer carries who refused and why, in words, since the driver did not ask them itself.
  // A refused payload goes as it is: it drops this worker, not the run.
  void end_loop(const std::string& who, const caf::error& error) {
    if (loop_ == Loop::idle) return;
    loop_ = Loop::idle;
    if (is_refused_payload(error)) {
      training_.deliver(error);
      return;
    }
    training_.deliver(caf::make_error(caf::sec::runtime_error, fmt::format("{}: {}", who, error_text(system(), error))));
  }

  // -- one gradient ----------------------------------------------------------------------------------
  // Takes the weights by reference into the message so it can let go of them before answering: a
  // server that finds nobody else holding its weights then steps in place.
  caf::expected<Gradients> gradients_from(Weights& weights) {
    const auto received = steady_now_ns();
    const auto& layout = layout_;
    if (weights.values.refused())
      return refused_payload_error(fmt::format("the {} it was sent", weights.values.refusal("weights payload")));
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
    // Reads the received weights and writes into the outgoing payload: nothing is copied. A push
    // through shared memory is computed in the slot it is sent from.
    const std::size_t size = layout.total_size();
    std::shared_ptr<void> slot = pushes_in_place() ? reserve_in_shared_memory(size * sizeof(float)) : nullptr;
    std::shared_ptr<AlignedFloats> buffer = slot ? nullptr : pool_.acquire();
    float* target = slot ? static_cast<float*>(slot.get()) : buffer->data();
    auto compute = [&](Model& model) {
      return model.compute_gradients(weights.values.data(), target, batch.inputs, batch.targets, dropout_rng_);
    };
    gradients.loss = setup_->workspaces ? compute(setup_->workspaces->borrow().model()) : compute(*model_);
    gradients.values = slot ? FloatBuffer(std::shared_ptr<const float>(slot, target), size)
                            : wire_.encode(std::move(buffer));  // wire: bf16-rounded or top-k compressed
    // Sent whole from a slot, its checksum is taken now, so the bytes are vouched for from here on
    // (payload_checksum.hpp); slices for shards take theirs as they are sent.
    if (slot && servers_->size() == 1) gradients.values = gradients.values.with_checksum();
    weights = Weights{};
    if (setup_->delay.count() > 0) std::this_thread::sleep_for(setup_->delay);
    gradients.timing = WorkTiming{previous_answered_, idle_since_, received, steady_now_ns()};
    previous_answered_ = gradients.timing.answered;
    return gradients;
  }

  // fp32 pushes to a server in another process on this host: what else the wire would encode (bf16
  // rounding, top-k) is done in a buffer of the worker's own.
  bool pushes_in_place() const {
    return setup_->job.cluster.wire == WireEncoding::fp32 && servers_ && servers_->first_through_shared_memory();
  }

  // Gathers the next batch while the gradient just sent is on its way.
  void prefetch() {
    position_before_next_ = batches_.position();
    next_batch_.emplace(batches_.next());
    idle_since_ = steady_now_ns();
  }

  std::shared_ptr<DataWorkerSetup> setup_;
  ParameterLayout layout_;
  std::shared_ptr<Model> model_;  // its own; null when it borrows one per gradient
  Minibatcher batches_;
  Random dropout_rng_;
  BufferPool pool_;
  GradientEncoder wire_;  // cluster.wire: the gradient as it is sent (topk: with this worker's residual)
  std::optional<Minibatcher::Batch> next_batch_;  // gathered ahead, not yet used
  Minibatcher::Position position_before_next_;
  // The push/pull loop's state.
  std::optional<ServerGroup> servers_;
  caf::typed_response_promise<bool> training_;
  std::uint64_t credits_ = 0;  // async/ssp: gradients it may still start
  std::uint64_t until_ = 0;    // sync: it computes only from weights older than this version
  std::uint64_t fed_ = 0;      // sync: the version its last push is for (pipelined: stops at until_)
  std::uint64_t drained_at_ = 0;  // pipelined sync: the stopping point before until_
  std::optional<Weights> latest_;  // the newest weights at hand
  bool latest_unused_ = false;     // no gradient was computed from latest_ yet
  std::optional<Weights> newer_;   // pipelined sync: weights that came while latest_ was still unused
  // Read by CAF's network thread when a message from another process arrives (see subtype).
  std::atomic<bool> on_network_thread_{false};
  std::size_t pushes_out_ = 0;     // gradients pushed and not yet answered
  HelpBackoff help_backoff_;       // when to watch for half a server step (help_with_step)
  // Its push/pull loop: not started (or ended), computing, or out of credits with no push out (async).
  enum class Loop { idle, computing, waiting_for_credit };
  Loop loop_ = Loop::idle;
  bool watching_ = false;  // a watch tick is on its way
  std::int64_t previous_answered_ = 0;  // for the timings sent with each gradient
  std::int64_t idle_since_ = 0;
};

}  // namespace

Result<SpawnedDataWorker> spawn_data_worker(caf::actor_system& system, DataWorkerSetup setup) {
  if (!setup.train || setup.train->count == 0) return Error{"worker has no training data"};
  // A worker that borrows its models keeps only their layout: a model of its own would be a weight
  // and a gradient buffer (0.9 MB for the tutorial's MLP) that nothing computes on.
  std::shared_ptr<Model> own_model;
  ParameterLayout layout;
  if (setup.workspaces) {
    layout = setup.workspaces->borrow().model().layout();
  } else {
    auto model = build_model(setup.job, setup.train->width, setup.train->num_classes);
    if (!model) return Error{model.error()};
    own_model = std::make_shared<Model>(std::move(model).value());
    layout = own_model->layout();
  }
  const auto layout_hash = layout.hash();
  const auto parameters = layout.total_size();
  const bool detached = setup.detached;
  auto shared_setup = std::make_shared<DataWorkerSetup>(std::move(setup));
  // Detached: each worker computes on its own thread, so a busy scheduler thread never holds one
  // worker's request back while the others run ahead.
  if (detached)
    return SpawnedDataWorker{
        system.spawn<DataWorker, caf::detached>(shared_setup, std::move(layout), std::move(own_model)), layout_hash,
        parameters};
  return SpawnedDataWorker{system.spawn<DataWorker>(shared_setup, std::move(layout), std::move(own_model)),
                           layout_hash, parameters};
}

}  // namespace psgrad
