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
#include "actors/data_worker_self.hpp"
#include "actors/worker_gradients.hpp"
#include "actors/server_group.hpp"
#include "runtime/steady_time.hpp"
#include "model/minibatcher.hpp"
#include "model/sparse_batcher.hpp"

namespace psgrad {

namespace {

using watch_atom = worker_watch_atom;
using continue_atom = worker_continue_atom;

// The longest gradient a worker computes on its process's network thread (see DataWorker::subtype).
constexpr std::chrono::milliseconds kNetworkThreadGradient{10};

// A step of a model with tables between its start and its push: it waits for its rows.
struct TableStep {
  WorkerRows::StepHandle current;     // the step waiting for its rows, computed once they are in
  WorkerRows::StepHandle prefetched;  // async: the next batch, its rows pulled ahead
  Weights weights;                    // the current step's
  std::int64_t received = 0;
  std::uint64_t feeds = 0;  // sync: the step its push feeds (pipelined: its weights' version + 1)
};

class DataWorker : public DataWorkerBase {
 public:
  DataWorker(caf::actor_config& config, std::shared_ptr<DataWorkerSetup> setup, ParameterLayout layout,
             std::shared_ptr<Model> model, std::optional<SparseModel> table_model)
      : DataWorkerBase(config),
        setup_(std::move(setup)),
        gradients_(*setup_, std::move(layout), std::move(model), std::move(table_model),
                   setup_->tables ? setup_->tables->train : nullptr) {
    if (!setup_->tables) return;
    rows_.emplace(
        this, std::move(*setup_->tables), setup_->worker_index,
        [this](const WorkerRows::StepHandle& step) { finish_table_step(step); },
        [this](const std::string& who, const caf::error& error) { end_loop(who, error); });
    setup_->tables.reset();
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
          if (rows_)
            return caf::make_error(caf::sec::invalid_argument,
                                   "a worker of a model with tables computes only in its own push/pull loop (train)");
          auto gradients = gradients_.from_next_batch(weights, false, false);
          if (!gradients) return std::move(gradients.error());
          // Answer first, then gather the next batch while the server works on this gradient.
          auto promise = make_response_promise<Gradients>();
          promise.deliver(std::move(*gradients));
          gradients_.prefetch();
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
          gradients_.prefetch();
          if (loop_ != Loop::idle) keep_computing();
        },
        [this](watch_atom) {
          watching_ = false;
          watch_servers();
        },
        [](clock_atom) { return steady_now_ns(); },
        [this](fed_atom) { return fed_; },
        [this](state_atom) { return gradients_.state(table_step_.prefetched.get()); },
        [this](stop_atom) {
          if (loop_ != Loop::idle) training_.deliver(true);
          loop_ = Loop::idle;
          quit();
          return true;
        },
    };
  }

 private:
  // The servers' and table shards' handles would keep them (and, through their listener, the driver)
  // alive: let go.
  void on_exit() override {
    servers_.reset();
    table_step_ = TableStep{};
    if (rows_) rows_->release();
  }

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
      // With tables one step at a time waits for its rows; pipelined, the next starts once it is pushed.
      if (table_step_.current) return;
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
      if (rows_) {
        ++pushes_out_;
        ++fed_;  // its push feeds the next version from now on: a driver settling a stop asks while the rows are out
        return start_table_step(std::move(from));
      }
      auto gradients = gradients_.from_next_batch(from, pushes_in_place(), servers_->size() == 1);
      if (!gradients) return end_loop(gradients_.who(), gradients.error());
      const std::chrono::nanoseconds took{gradients->timing.answered - gradients->timing.received};
      on_network_thread_.store(took < kNetworkThreadGradient, std::memory_order_relaxed);
      ++pushes_out_;
      ++fed_;
      push(std::move(*gradients));
      // On the network thread the push leaves only once this handler has returned (the multiplexer
      // writes it next, with scheduler.max-throughput 1 before this worker's next message): the
      // next batch and gradient come in a message of their own.
      if (running_on_network_thread(*this)) return send(this, continue_atom::value);
      gradients_.prefetch();
      if (pushes_out_ == depth && setup_->help && help_backoff_.watch_now()) help_backoff_.record(help_with_step());
    }
  }

  // No CAF timeout: watch_servers times the answer.
  void push(Gradients gradients) {
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
        [this](const std::string& who, const caf::error& error) { end_loop(who, error); }, std::move(gradients));
  }

  // -- a step of a model with tables: its rows are pulled (or were, ahead), then it is computed ------
  void start_table_step(Weights weights) {
    if (auto reason = gradients_.check(weights); !reason.empty())
      return end_loop(gradients_.who(), gradients_.error_for(weights, reason));
    auto& step = table_step_;
    step.current = step.prefetched ? std::move(step.prefetched) : gradients_.pull_next(*rows_, weights.version);
    step.prefetched.reset();
    step.received = steady_now_ns();
    step.feeds = fed_ - 1;  // fed_ counts this push already: it makes version fed_
    step.weights = std::move(weights);
    rows_->start(step.current);
  }

  // By value: the handle it is called with may be table_step_.current, which it lets go.
  void finish_table_step(WorkerRows::StepHandle current) {
    if (loop_ == Loop::idle || current != table_step_.current) return;
    table_step_.current.reset();
    std::vector<SparseRows> row_gradients;
    auto gradients = gradients_.from_rows(table_step_.weights, *current, *rows_, table_step_.received,
                                          pushes_in_place(), servers_->size() == 1, row_gradients);
    if (!gradients) return end_loop(gradients_.who(), gradients.error());
    const bool sync = setup_->job.cluster.mode == TrainingMode::sync;
    const auto version = gradients->version;
    // Rows first: a sync step's rows are pulled only after the servers' answer, which this push waits for.
    // Pipelined sync, the rows go to the step the push feeds, as the gradient does on the dense server.
    rows_->push(sync && setup_->job.cluster.pipeline ? table_step_.feeds : version, row_gradients, !sync);
    push(std::move(*gradients));
    // Sync steps pull the rows of the version they compute with, known only with their weights. Async
    // rows are as they are: pulled after this push (a shard answers its messages in order), they hold it.
    if (!sync) table_step_.prefetched = gradients_.pull_next(*rows_, version);
    gradients_.mark_idle();
    keep_computing();  // pipelined (async): the next step starts while this push is out
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
    const auto silent_error = [&] {
      return caf::make_error(caf::sec::request_timeout, fmt::format("no answer within {} ms", timeout.count()));
    };
    if (const auto silent = servers_->silent_server(timeout)) return end_loop(*silent, silent_error());
    if (rows_)
      if (const auto shard = rows_->silent_shard(timeout))
        return end_loop(fmt::format("table shard {}", *shard), silent_error());
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

  // fp32 pushes to a server in another process on this host: what else the wire would encode (bf16
  // rounding, top-k) is done in a buffer of the worker's own.
  bool pushes_in_place() const { return servers_ && servers_->first_through_shared_memory(); }

  std::shared_ptr<DataWorkerSetup> setup_;
  WorkerGradients gradients_;
  std::optional<WorkerRows> rows_;  // a model with tables: their rows
  TableStep table_step_;
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
};

}  // namespace

Result<SpawnedDataWorker> spawn_data_worker(caf::actor_system& system, DataWorkerSetup setup) {
  // A worker that borrows its models keeps only their layout: a model of its own would be a weight
  // and a gradient buffer (0.9 MB for the tutorial's MLP) that nothing computes on.
  std::shared_ptr<Model> own_model;
  std::optional<SparseModel> table_model;
  ParameterLayout layout;
  if (setup.tables) {
    if (!setup.tables->train || setup.tables->train->count == 0) return Error{"worker has no training data"};
    if (setup.tables->shards.empty()) return Error{"a worker of a model with tables needs at least one table shard"};
    auto model = SparseModel::build_for_data(setup.job.model, *setup.tables->train, "training data");
    if (!model) return Error{model.error()};
    table_model.emplace(std::move(model).value());
    layout = table_model->dense().layout();
  } else if (!setup.train || setup.train->count == 0) {
    return Error{"worker has no training data"};
  } else if (setup.workspaces) {
    layout = setup.workspaces->borrow().model().layout();
  } else {
    auto model = build_model(setup.job, setup.train->width, setup.train->num_classes);
    if (!model) return Error{model.error()};
    own_model = std::make_shared<Model>(std::move(model).value());
    layout = own_model->layout();
  }
  const auto layout_hash = layout.hash();
  const auto parameters = layout.total_size();
  // A worker of a model with tables stays on the scheduler, as it always ran: detached, it kept the actor
  // system from shutting down while a sync table shard still held its pull (seen in test_worker_tables).
  const bool detached = setup.detached && !setup.tables;
  auto shared_setup = std::make_shared<DataWorkerSetup>(std::move(setup));
  // Detached: each worker computes on its own thread, so a busy scheduler thread never holds one
  // worker's request back while the others run ahead.
  if (detached)
    return SpawnedDataWorker{system.spawn<DataWorker, caf::detached>(shared_setup, std::move(layout),
                                                                      std::move(own_model), std::move(table_model)),
                             layout_hash, parameters};
  return SpawnedDataWorker{
      system.spawn<DataWorker>(shared_setup, std::move(layout), std::move(own_model), std::move(table_model)),
      layout_hash, parameters};
}

}  // namespace psgrad
