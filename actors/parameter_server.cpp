#include "actors/parameter_server.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/result.hpp"
#include "caf/sec.hpp"
#include "actors/actor_config.hpp"
#include "actors/network_thread.hpp"
#include "actors/socket_backlog.hpp"
#include "actors/steady_time.hpp"
#include "actors/wire_encoder.hpp"
#include "model/norm_chunks.hpp"

namespace psgrad {

namespace {

std::size_t shard_size(const ParameterServerState& state) {
  return state.end == 0 ? state.layout.total_size() : state.end - state.begin;
}

// To itself: the oldest ordered answer's receipt_wait ran out (see arm_receipt_timer).
using receipt_timer_atom = caf::atom_constant<caf::atom("rcpttimer")>;
// To itself: time to look whether the ordered answers out have left its sockets (see pace).
using pace_atom = caf::atom_constant<caf::atom("pace")>;
using ParameterServerSelf =
    ParameterServerActor::extend<caf::reacts_to<receipt_timer_atom>, caf::reacts_to<pace_atom>>;

class ParameterServer : public ParameterServerSelf::base {
 public:
  ParameterServer(caf::actor_config& config, std::shared_ptr<ParameterServerState> state)
      : ParameterServerSelf::base(config),
        state_(std::move(state)),
        pool_(shard_size(*state_)),
        wire_(state_->wire, shard_size(*state_)) {
    if (state_->end == 0) state_->end = state_->layout.total_size();
    plan_ = plan_of(*state_);
    auto first = pool_.acquire();
    first->assign(state_->weights.begin(), state_->weights.end());
    current_ = std::shared_ptr<float>(first, first->data());
  }

  // A push from another process is stepped on the network thread that read it (network_thread.hpp):
  // a step is short. Measured, 2 worker processes over loopback, alternated, medians of 4: async 178k
  // samples/s against 147k, pipelined 216k against 183k, sync 180k against 177k.
  subtype_t subtype() const override { return network_thread_subtype(true); }

  behavior_type make_behavior() override {
    return {
        [this](apply_atom, Gradients& gradients) -> caf::result<Weights> {
          // A sync push carries no sums of squares: the shards exchange those of the step's sum.
          if (auto error = check(gradients, !barrier_)) return error;
          if (barrier_) return gather(std::move(gradients));
          const auto started = steady_now_ns();
          const float* values = gradients.values.data();  // this shard's floats
          const bool into_slot = answered_in_place(gradients);
          if (auto error = step(&values, 1, gradients.foreign_squares, gradients.loss, into_slot)) return error;
          tell(gradients, 1, started);
          return answer_to(gradients, snapshot());
        },
        [this](listen_atom, StepListener& listener, std::uint32_t shard) {
          listener_ = std::move(listener);
          shard_ = shard;
        },
        [this](barrier_atom, std::vector<std::uint32_t>& members, std::uint32_t needed) {
          barrier_ = true;
          members_ = std::move(members);
          needed_ = needed;
          send_every_answer();
          // A worker no longer listed will not be waited for: what it sent is dropped with it, unless
          // the step already summed it for the squares told to the other shards.
          for (std::size_t k = 0; k < pending_.size() && !exchanging_; ++k)
            if (pending_[k].waiting && !member(k)) answer_dropped(pending_[k]);
          for (std::size_t k = 0; k < early_.size(); ++k)
            if (early_[k].waiting && !member(k)) answer_dropped(early_[k]);
          take_step_if_ready();
          std::vector<std::uint32_t> waiting;
          for (std::size_t k = 0; k < pending_.size(); ++k)
            if (pending_[k].waiting) waiting.push_back(static_cast<std::uint32_t>(k));
          return waiting;
        },
        [this](apply_atom, const std::vector<Gradients>& all) -> caf::result<Weights> {
          if (all.empty()) return caf::make_error(caf::sec::invalid_argument, "no gradients to apply");
          // The sums of squares of foreign chunks are of the sum, so only the first gradient has them.
          for (std::size_t k = 0; k < all.size(); ++k)
            if (auto error = check(all[k], k == 0)) return error;
          // Summed in the given (worker) order so that the result is deterministic.
          gradient_slices_.clear();
          float loss = 0.0f;  // the first non-finite loss, if any: the one a divergence message names
          for (const auto& gradients : all) {
            gradient_slices_.push_back(gradients.values.data());
            if (std::isfinite(loss)) loss = gradients.loss;
          }
          if (auto error = step(gradient_slices_.data(), gradient_slices_.size(), all[0].foreign_squares, loss))
            return error;
          return answer_to(all[0], snapshot());
        },
        [this](weights_atom) -> Weights { return snapshot(); },
        [this](master_atom) -> Weights { return master(); },
        [this](state_atom) -> ServerState { return ServerState{master(), state_->optimizer->state()}; },
        [this](plan_atom) -> ShardPlan { return plan_; },
        [this](peers_atom, std::uint32_t index, std::vector<ShardPeer>& peers,
               const std::vector<ShardPlan>& plans) -> caf::result<bool> {
          if (auto error = meet_peers(index, std::move(peers), plans)) return error;
          return true;
        },
        [this](squares_atom, ShardSquares& told) { take_squares(told); },
        [this](received_atom, std::uint32_t worker, std::uint64_t version) { received(worker, version); },
        [this](receipt_timer_atom) { receipt_wait_ran_out(); },
        [this](pace_atom) { pace(); },
        [this](stop_atom) {
          quit();
          return true;
        },
    };
  }

 private:
  // The listener (the driver) holds its workers, which hold this server: let go, so all can be freed.
  void on_exit() override {
    listener_ = StepListener{};
    peers_.clear();
    pending_.clear();
    early_.clear();
    queued_.clear();
  }

  // A shard takes only the floats it holds, and the sums of squares its plan asks for (none from a
  // gradient that does not carry them for its step).
  caf::error check(const Gradients& gradients, bool carries_squares) const {
    if (const auto differs = state_->layout.mismatch(gradients.layout_hash, gradients.values.size(),
                                                     state_->begin, state_->end))
      return caf::make_error(caf::sec::invalid_argument,
                             fmt::format("gradients from worker {} do not fit the model layout ({})",
                                         gradients.worker, *differs));
    const std::size_t expected = carries_squares ? plan_.foreign_chunks.size() : 0;
    if (gradients.foreign_squares.size() != expected)
      return caf::make_error(caf::sec::invalid_argument,
                             fmt::format("gradients from worker {} carry {} sums of squares of chunks held by other "
                                         "shards; expected {}",
                                         gradients.worker, gradients.foreign_squares.size(), expected));
    return caf::error{};
  }

  // -- sync: the barrier sits where the gradients arrive, so a gradient goes worker -> server -> worker
  struct Pending {
    Gradients gradients;
    caf::typed_response_promise<Weights> promise;
    bool waiting = false;
    bool remote = false;  // from another host: its answer may wait its turn (cluster.ordered_answers)
  };

  bool member(std::size_t worker) const {
    return std::find(members_.begin(), members_.end(), worker) != members_.end();
  }

  caf::result<Weights> gather(Gradients gradients) {
    if (broken_) return broken_;
    const auto worker = gradients.worker;
    if (pending_.size() <= worker) pending_.resize(worker + 1);
    auto& slot = pending_[worker];
    // Pipelined: a member's second push, for the step after the one under way, waits its turn.
    if (state_->pipelined && member(worker) && (slot.waiting || exchanging_)) {
      if (early_.size() <= worker) early_.resize(worker + 1);
      if (!early_[worker].waiting) return hold(early_[worker], std::move(gradients));
    }
    // From weights a step ago (a backup worker's late gradient), or from a worker not (or no longer)
    // listed: dropped, and the worker computes from the current weights. So is one that comes while
    // the shards exchange the squares of a sum that does not hold it (a worker that just joined).
    if (!fits_step(gradients.version) || !member(worker) || slot.waiting || exchanging_) {
      tell(gradients, 0, 0);
      return answer_to(gradients, snapshot());
    }
    auto promise = hold(slot, std::move(gradients));
    take_step_if_ready();
    return promise;
  }

  // Whether a gradient from weights of `version` may join the step from state_->version: computed from
  // those weights, or pipelined, from the weights a step older.
  bool fits_step(std::uint64_t version) const {
    return version == state_->version || (state_->pipelined && version + 1 == state_->version);
  }

  caf::typed_response_promise<Weights> hold(Pending& slot, Gradients gradients) {
    const auto& sender = current_sender();
    slot.remote = sender && sender->node() != node() && !gradients.values.arrived_through_shared_memory();
    slot.gradients = std::move(gradients);
    slot.promise = make_response_promise<Weights>();
    slot.waiting = true;
    return slot.promise;
  }

  // Pipelined: after a step, each member's early push becomes its push for the next one.
  void promote_early() {
    bool promoted = false;
    for (std::size_t k = 0; k < early_.size(); ++k) {
      if (!early_[k].waiting) continue;
      if (fits_step(early_[k].gradients.version) && member(k)) {
        pending_[k] = std::move(early_[k]);
        promoted = true;
      } else {
        answer_dropped(early_[k]);
      }
      early_[k] = Pending{};
    }
    if (promoted) take_step_if_ready();
  }

  void answer_dropped(Pending& slot) {
    tell(slot.gradients, 0, 0);
    slot.promise.deliver(answer_to(slot.gradients, snapshot()));
    slot = Pending{};
  }

  // With backup workers the step takes the first `needed` gradients to arrive; they are summed in
  // worker order so that the result does not depend on the order they came in.
  //
  // Several shards step together: once a shard has its step's gradients, it tells every other shard
  // which workers they came from, and the sums of squares of its own chunks of their sum that the
  // other's clip norms need (a cut array's norm is of the whole array); it steps once every other
  // shard has told it the same workers (exchange_squares, take_squares, agree).
  void take_step_if_ready() {
    if (!barrier_ || broken_) return;
    if (!exchanging_) {
      std::size_t gathered = 0;
      for (const auto& slot : pending_) gathered += slot.waiting ? 1 : 0;
      if (needed_ == 0 || gathered < needed_) return;
      if (sharded()) {
        if (!peers_known_)
          return fail_step(caf::make_error(
              caf::sec::runtime_error,
              fmt::format("a sync step on server shard {} must agree with the other shards, but it was not told "
                          "its peers",
                          shard_)));
        summed_workers_.clear();
        for (std::size_t k = 0; k < pending_.size(); ++k)
          if (pending_[k].waiting) summed_workers_.push_back(static_cast<std::uint32_t>(k));
        exchange_squares();
      }
    }
    if (exchanging_ && !agree()) return;  // the step waits for the other shards
    const auto summed = collect_gradients();
    exchanging_ = false;
    received_ = 0;
    std::fill(told_.begin(), told_.end(), false);
    // The shards agreed on no gradient at all (each dropped its own): no step; they gather again.
    if (summed == 0) return;
    float loss = 0.0f;  // the first non-finite loss, if any: the one a divergence message names
    for (const auto& slot : pending_)
      if (slot.waiting && std::isfinite(loss)) loss = slot.gradients.loss;
    for (std::size_t f = 0; f < from_.size(); ++f) incoming_[f] = peer_squares_[from_[f]][position_[f]];
    const auto started = steady_now_ns();
    // A plain sync step: every worker now waits for it, so a core is free for its halves.
    const auto helper = state_->pipelined ? nullptr : state_->step_helper.get();
    if (helper) helper->wake();
    bool into_slot = false;  // the first answer through shared memory is sent from it; the others copy it
    for (const auto& slot : pending_) into_slot = into_slot || (slot.waiting && answered_in_place(slot.gradients));
    const auto error = step(gradient_slices_.data(), gradient_slices_.size(), incoming_, loss, into_slot);
    const auto weights = error ? Weights{} : snapshot();
    for (auto& slot : pending_) {
      if (!slot.waiting) continue;
      if (error) {
        slot.promise.deliver(error);
      } else {
        tell(slot.gradients, static_cast<std::uint32_t>(summed), started);
        auto answer = answer_to(slot.gradients, weights);
        if (state_->ordered_answers && slot.remote)
          queued_.push_back(QueuedAnswer{std::move(slot.promise), std::move(answer), slot.gradients.worker});
        else
          slot.promise.deliver(std::move(answer));
      }
      slot = Pending{};
    }
    send_next_answers();
    if (!state_->pipelined) return;
    if (error) return answer_every_one(early_, error);
    if (sharded()) take_squares_told_ahead();
    if (broken_) return;
    promote_early();
  }

  // Every gradient waiting in `slots` is answered with `error`.
  static void answer_every_one(std::vector<Pending>& slots, const caf::error& error) {
    for (auto& slot : slots) {
      if (!slot.waiting) continue;
      slot.promise.deliver(error);
      slot = Pending{};
    }
  }

  // -- sync with cluster.ordered_answers: a step's answers to workers on other hosts, one at a time ---
  // Sent side by side, N answers share the server's link and all arrive at its end, so every worker
  // starts computing only then, and the next step's gradients in turn share the link's other
  // direction: about 2·N message times a step. One after another, the first workers compute and push
  // while later answers are on the wire: about N + 1. The next goes out as soon as the one before has
  // left this process's sockets for the wire (pace: the kernel's count of bytes not yet acknowledged,
  // less what a round trip keeps in flight), or the worker says it received its weights, or after
  // receipt_wait without either (a lost or slow worker holds nobody up). Waiting for the receipt alone
  // leaves the link idle for a round trip between answers. Connections that did not come through
  // psgrad's gate (TLS) are not watched: there the receipt paces.
  // With K shards each sends K answers at a time: a worker receives all K slices over its own link,
  // which one answer at a time would leave the shards' links idle for (K - 1) / K of the time.
  static constexpr std::chrono::milliseconds receipt_wait{1000};

  struct QueuedAnswer {
    caf::typed_response_promise<Weights> promise;
    Weights weights;
    std::uint32_t worker = 0;
  };

  // An answer out with no receipt yet.
  struct Awaited {
    std::uint32_t worker = 0;
    std::uint64_t version = 0;
    std::int64_t deadline = 0;  // steady_now_ns() by which it counts as received anyway
    // SocketBacklog::written once its bytes are all in the kernel (0: sockets not watched)
    std::uint64_t written_when_in = 0;
  };

  void send_next_answers() {
    const std::size_t at_once = std::max<std::size_t>(peers_.size(), 1);
    if (awaiting_.size() >= at_once || queued_.empty()) return arm_receipt_timer();
    const auto sockets = socket_backlog();
    auto written = sockets.written;
    while (awaiting_.size() < at_once && !queued_.empty()) {
      auto next = std::move(queued_.front());
      queued_.pop_front();
      const auto deadline = steady_now_ns() + std::chrono::nanoseconds(receipt_wait).count();
      written += wire_bytes(next.weights.values);
      awaiting_.push_back(Awaited{next.worker, next.weights.version, deadline, sockets.sockets > 0 ? written : 0});
      next.promise.deliver(std::move(next.weights));
    }
    arm_receipt_timer();
    // A first look as soon as CAF's network thread has had its turn (on a fast link the answer may
    // have left by then), later ones timed by the backlog.
    if (sockets.sockets > 0) arm_pace_timer(std::chrono::microseconds(0));
  }

  // A worker's receipt of its answer: the next answer goes.
  void received(std::uint32_t worker, std::uint64_t version) {
    const auto found = std::find_if(awaiting_.begin(), awaiting_.end(), [&](const Awaited& awaited) {
      return awaited.worker == worker && awaited.version == version;
    });
    if (found == awaiting_.end()) return;
    awaiting_.erase(found);
    send_next_answers();
  }

  // One timer at a time, for the oldest answer out (awaiting_ is in the order they were sent), rather
  // than one per answer: a receipt usually comes first, and each timer is a wake-up of CAF's clock.
  void arm_receipt_timer() {
    if (receipt_timer_armed_ || awaiting_.empty()) return;
    const auto left = std::max<std::int64_t>(awaiting_.front().deadline - steady_now_ns(), 0);
    delayed_send(this, std::chrono::nanoseconds(left), receipt_timer_atom::value);
    receipt_timer_armed_ = true;
  }

  // Answers whose receipt did not come in time count as received.
  void receipt_wait_ran_out() {
    receipt_timer_armed_ = false;
    const auto now = steady_now_ns();
    awaiting_.erase(std::remove_if(awaiting_.begin(), awaiting_.end(),
                                   [now](const Awaited& awaited) { return awaited.deadline <= now; }),
                    awaiting_.end());
    send_next_answers();  // and arms the timer for the oldest answer still out
  }

  void arm_pace_timer(std::chrono::microseconds after) {
    if (pace_timer_armed_) return;
    if (after.count() == 0)
      send(this, pace_atom::value);
    else
      delayed_send(this, after, pace_atom::value);
    pace_timer_armed_ = true;
  }

  // Answers whose bytes are all in the kernel, with no more queued than the link sends in about half a
  // millisecond (the next answer's own way into the kernel), have left: the next ones go.
  void pace() {
    pace_timer_armed_ = false;
    const auto sockets = socket_backlog();
    const auto soon = static_cast<std::uint64_t>(std::max(sockets.bytes_per_second * 0.0005, 16384.0));
    const bool drained = sockets.queued <= soon;
    const auto before = awaiting_.size();
    awaiting_.erase(std::remove_if(awaiting_.begin(), awaiting_.end(),
                                   [&](const Awaited& awaited) {
                                     return awaited.written_when_in != 0 && drained &&
                                            sockets.written >= awaited.written_when_in;
                                   }),
                    awaiting_.end());
    if (awaiting_.size() != before) send_next_answers();  // which looks at once at the ones it sends
    const auto watched = std::find_if(awaiting_.begin(), awaiting_.end(),
                                      [](const Awaited& awaited) { return awaited.written_when_in != 0; });
    // No watched connection left (they closed): receipts and the wait for them take over.
    if (pace_timer_armed_ || watched == awaiting_.end() || sockets.sockets == 0) return;
    // Looks again in 0.2 ms while the answer is still on its way into the kernel, in 1 ms while no
    // rate is known yet, and else when the queue should have drained (0.2-5 ms on).
    auto wait = std::chrono::microseconds(200);
    if (sockets.written >= watched->written_when_in) {
      if (sockets.bytes_per_second <= 0) {
        wait = std::chrono::microseconds(1000);
      } else if (!drained) {
        const auto seconds = static_cast<double>(sockets.queued - soon) / sockets.bytes_per_second;
        wait = std::chrono::microseconds(std::clamp<std::int64_t>(static_cast<std::int64_t>(seconds * 1e6), 200, 5000));
      }
    }
    arm_pace_timer(wait);
  }

  // Members changed or the run broke: nobody is waited for.
  void send_every_answer() {
    awaiting_.clear();
    for (auto& queued : queued_) queued.promise.deliver(std::move(queued.weights));
    queued_.clear();
  }

  // One of several shards (a single server holds every float).
  bool sharded() const { return plan_.begin != 0 || plan_.end != state_->layout.total_size(); }

  // The waiting gradients, in worker order; returns how many.
  std::size_t collect_gradients() {
    gradient_slices_.clear();
    for (const auto& slot : pending_)
      if (slot.waiting) gradient_slices_.push_back(slot.gradients.values.data());
    return gradient_slices_.size();
  }

  // The listener hears of every gradient; `summed` 0 is a dropped one.
  void tell(const Gradients& gradients, std::uint32_t summed, std::int64_t started) {
    if (!listener_) return;
    send(listener_, applied_atom::value,
         StepNote{gradients.worker, gradients.samples, gradients.version, state_->version, gradients.loss,
                  gradients.timing, shard_, summed, started, summed == 0 ? 0 : steady_now_ns()});
  }

  // -- sync on several shards: the sums of squares of the step's sum, exchanged once per step --------
  // From the plans of every shard: which of this shard's chunks which peer needs, and from which peer
  // each of its own foreign chunks comes.
  caf::error meet_peers(std::uint32_t index, std::vector<ShardPeer> peers, const std::vector<ShardPlan>& plans) {
    const auto refuse = [](const std::string& why) { return caf::make_error(caf::sec::invalid_argument, why); };
    if (peers.size() != plans.size() || index >= plans.size())
      return refuse(fmt::format("told {} peers with {} plans, itself as shard {}", peers.size(), plans.size(), index));
    if (plans[index].begin != plan_.begin || plans[index].end != plan_.end ||
        !(plans[index].foreign_chunks == plan_.foreign_chunks))
      return refuse(fmt::format("told it is shard {} holding floats [{}, {}), but it holds [{}, {})", index,
                                plans[index].begin, plans[index].end, plan_.begin, plan_.end));
    const auto holder = [&](const GradientRange& range) -> std::size_t {
      for (std::size_t j = 0; j < plans.size(); ++j)
        if (range.begin >= plans[j].begin && range.begin + range.size <= plans[j].end) return j;
      return plans.size();
    };
    std::vector<GradientRange> own_cut_chunks;
    std::vector<std::vector<std::size_t>> sends(plans.size());
    std::vector<std::size_t> from(plan_.foreign_chunks.size(), 0);
    std::vector<std::size_t> position(plan_.foreign_chunks.size(), 0);
    std::vector<std::size_t> count_from(plans.size(), 0);
    for (std::size_t f = 0; f < plan_.foreign_chunks.size(); ++f) {
      const auto& range = plan_.foreign_chunks[f];
      const auto j = holder(range);
      if (j == plans.size() || j == index)
        return refuse(fmt::format("no other shard holds floats [{}, {})", range.begin, range.begin + range.size));
      from[f] = j;
      position[f] = count_from[j]++;
    }
    for (std::size_t j = 0; j < plans.size(); ++j) {
      if (j == index) continue;
      for (const auto& range : plans[j].foreign_chunks) {
        if (holder(range) != index) continue;
        auto at = std::find(own_cut_chunks.begin(), own_cut_chunks.end(), range);
        if (at == own_cut_chunks.end()) at = own_cut_chunks.insert(own_cut_chunks.end(), range);
        sends[j].push_back(static_cast<std::size_t>(at - own_cut_chunks.begin()));
      }
    }
    index_ = index;
    peers_ = std::move(peers);
    peers_[index] = ShardPeer{};  // it never tells itself, and need not keep itself alive
    own_cut_chunks_ = std::move(own_cut_chunks);
    sends_ = std::move(sends);
    from_ = std::move(from);
    position_ = std::move(position);
    squares_from_ = std::move(count_from);
    expected_ = plans.size() - 1;  // every other shard, if only to say which workers its sum holds
    std::uint64_t largest = 0;
    for (const auto& chunk : own_cut_chunks_) largest = std::max(largest, chunk.size);
    scratch_.assign(largest, 0.0f);
    own_squares_.assign(own_cut_chunks_.size(), 0.0);
    incoming_.assign(plan_.foreign_chunks.size(), 0.0);
    told_.assign(plans.size(), false);
    ahead_.assign(plans.size(), std::nullopt);
    peer_squares_.assign(plans.size(), {});
    peer_workers_.assign(plans.size(), {});
    received_ = 0;
    peers_known_ = true;
    return caf::error{};
  }

  // The sums of squares of this shard's cut chunks of the gathered gradients' sum, with the very
  // arithmetic one server's optimizer uses for them (range_squares), and the workers they came from, to
  // every peer. Told again whenever this shard drops a gradient to agree with the others.
  void exchange_squares() {
    collect_gradients();
    for (std::size_t c = 0; c < own_cut_chunks_.size(); ++c)
      own_squares_[c] = range_squares(gradient_slices_.data(), gradient_slices_.size(),
                                      own_cut_chunks_[c].begin - plan_.begin, own_cut_chunks_[c].size,
                                      scratch_.data());
    for (std::size_t j = 0; j < sends_.size(); ++j) {
      if (j == index_) continue;
      ShardSquares told{state_->version, index_, {}, summed_workers_};
      told.squares.reserve(sends_[j].size());
      for (const auto c : sends_[j]) told.squares.push_back(own_squares_[c]);
      send(peers_[j], squares_atom::value, std::move(told));
    }
    exchanging_ = true;
  }

  // Brings this shard's workers in line with those its peers told: a peer whose sum lacks one of this
  // shard's gradients (a worker lost or joined while the shards gathered) makes this shard drop it and
  // tell its peers again; a peer whose sum holds one this shard lacks will do the same once it hears
  // from this shard, so what it told is set aside until then. Sets only shrink, so they meet. True
  // once every peer told squares of the very gradients this shard sums.
  bool agree() {
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (std::size_t j = 0; j < told_.size(); ++j) {
        if (!told_[j] || peer_workers_[j] == summed_workers_) continue;
        const auto& theirs = peer_workers_[j];
        if (std::includes(theirs.begin(), theirs.end(), summed_workers_.begin(), summed_workers_.end())) {
          told_[j] = false;
          --received_;
          continue;
        }
        std::vector<std::uint32_t> both;
        std::set_intersection(summed_workers_.begin(), summed_workers_.end(), theirs.begin(), theirs.end(),
                              std::back_inserter(both));
        summed_workers_ = std::move(both);
        dropped = true;
      }
      if (!dropped) break;
      for (std::size_t k = 0; k < pending_.size(); ++k)
        if (pending_[k].waiting &&
            !std::binary_search(summed_workers_.begin(), summed_workers_.end(), static_cast<std::uint32_t>(k)))
          answer_dropped(pending_[k]);
      exchange_squares();
    }
    return received_ == expected_;
  }

  // A peer's squares of the step under way (it may have gathered its gradients first), or of a smaller
  // set of gradients than it told before. Pipelined, a peer that took this step already may tell the
  // next one's: they wait here until this shard has stepped (CAF keeps one peer's messages in order,
  // and no shard runs two steps ahead, since each step needs every shard's squares).
  void take_squares(ShardSquares& told) {
    if (broken_) return;
    if (!peers_known_) return (void)refuse_squares(told, "it was not told its peers");
    if (told.shard >= told_.size() || told.shard == index_) return (void)refuse_squares(told, "no such peer");
    if (state_->pipelined && told.version == state_->version + 1) {
      auto& waiting = ahead_[told.shard];
      if (waiting && !fewer_workers(told.workers, waiting->workers))
        return (void)refuse_squares(told, "it already told them for the next step");
      waiting = std::move(told);
      return;
    }
    if (record_squares(told) && exchanging_) take_step_if_ready();
  }

  // After a step: the squares peers told of it before this shard got there.
  void take_squares_told_ahead() {
    for (auto& waiting : ahead_) {
      if (!waiting) continue;
      auto told = std::move(*waiting);
      waiting.reset();
      if (!record_squares(told)) return;
    }
  }

  // Whether `workers` is a strict subset of `before`: a peer that dropped a gradient to agree.
  static bool fewer_workers(const std::vector<std::uint32_t>& workers, const std::vector<std::uint32_t>& before) {
    return workers.size() < before.size() && std::includes(before.begin(), before.end(), workers.begin(), workers.end());
  }

  // Ends the run (fail_step); false, for record_squares.
  bool refuse_squares(const ShardSquares& told, const std::string& why) {
    fail_step(caf::make_error(caf::sec::runtime_error,
                              fmt::format("server shard {} refused the sums of squares from shard {}: {}", index_,
                                          told.shard, why)));
    return false;
  }

  // Checks a peer's squares of the step under way and keeps them; false when refused (the run ends).
  bool record_squares(ShardSquares& told) {
    if (told.version != state_->version)
      return refuse_squares(told, fmt::format("they are of the step from version {}, and this shard is at version "
                                              "{}; the shards are out of step",
                                              told.version, state_->version));
    const auto& workers = told.workers;
    if (std::adjacent_find(workers.begin(), workers.end(), std::greater_equal<std::uint32_t>()) != workers.end())
      return refuse_squares(told, "its workers are not in ascending order");
    if (told_[told.shard] && !fewer_workers(workers, peer_workers_[told.shard]))
      return refuse_squares(told, "it already told them for this step");
    if (told.squares.size() != squares_from_[told.shard])
      return refuse_squares(told, fmt::format("{} sums where {} were expected", told.squares.size(),
                                              squares_from_[told.shard]));
    peer_squares_[told.shard] = std::move(told.squares);
    peer_workers_[told.shard] = std::move(told.workers);
    if (!told_[told.shard]) ++received_;
    told_[told.shard] = true;
    return true;
  }

  // The shards no longer agree on a step: every gradient waiting is answered with the error, and so is
  // every later one (the run ends).
  void fail_step(caf::error error) {
    broken_ = error;
    exchanging_ = false;
    send_every_answer();
    answer_every_one(pending_, error);
    answer_every_one(early_, error);
    for (auto& waiting : ahead_) waiting.reset();
  }

  // Divergence is caught here, the step it happens: a NaN or infinite loss is refused before it
  // touches the weights; a step that produced non-finite weights stops the run too.
  caf::error step(const float* const* gradients, std::size_t count, const std::vector<double>& foreign_squares,
                  float loss, bool into_slot = false) {
    const auto next_step = state_->version + 1;
    if (!std::isfinite(loss)) return diverged(fmt::format("the loss is {}", loss), next_step);
    // Weights already handed out stay immutable: when anyone besides the pool and current_ still holds
    // them, or a worker on this host may read them in their slot, the step reads them and writes a
    // free buffer (no copy first); otherwise it works in place.
    // (Counted before `next` below takes a reference of its own.)
    const bool handed_out = current_in_slot_ || current_.use_count() > 2;
    auto next = current_;
    bool next_in_slot = current_in_slot_;
    if (auto slot = into_slot ? reserve_in_shared_memory(shard_size(*state_) * sizeof(float)) : nullptr) {
      next = std::shared_ptr<float>(slot, static_cast<float*>(slot.get()));
      next_in_slot = true;
    } else if (handed_out) {
      auto buffer = pool_.acquire();
      next = std::shared_ptr<float>(buffer, buffer->data());
      next_in_slot = false;
    }
    state_->optimizer->apply_gradients(current_.get(), next.get(), gradients, count, foreign_squares.data());
    current_ = std::move(next);
    current_in_slot_ = next_in_slot;
    if (!state_->optimizer->last_step_finite())
      return diverged(fmt::format("the gradients or the new weights are not finite (loss {:.4g})", loss), next_step);
    ++state_->version;
    return caf::error{};
  }

  static caf::error diverged(const std::string& what, std::uint64_t step) {
    return caf::make_error(caf::sec::runtime_error,
                           fmt::format("training diverged at step {}: {}; lower optimizer.learn_rate or keep "
                                       "optimizer.grad_clip on, and resume from the last checkpoint",
                                       step, what));
  }

  // The weights as workers get them (wire: encoded here), and the master weights themselves.
  Weights snapshot() {
    return Weights{state_->version, state_->layout.hash(), wire_.encode(current_, shard_size(*state_))};
  }
  // An answer goes back the way its push came: through shared memory, the step writes the new
  // weights into the slot they are sent from (fp32; other wires send a rounded copy anyway).
  bool answered_in_place(const Gradients& pushed) const {
    return pushed.values.arrived_through_shared_memory() && wire_.encoding() == WireEncoding::fp32;
  }
  // A pusher on this host whose gradient came through shared memory gets its weights the same way.
  static Weights answer_to(const Gradients& pushed, Weights weights) {
    weights.values = weights.values.through_shared_memory(pushed.values.arrived_through_shared_memory());
    return weights;
  }
  Weights master() const {
    return Weights{state_->version, state_->layout.hash(), FloatBuffer(current_, shard_size(*state_))};
  }

  std::shared_ptr<ParameterServerState> state_;
  BufferPool pool_;
  // The master weights: a buffer of pool_ (which holds it too), or the slot of shared memory an async
  // step wrote them into for its answer, where a worker may be reading them.
  std::shared_ptr<float> current_;
  bool current_in_slot_ = false;
  WeightsEncoder wire_;
  ShardPlan plan_;  // what pushers send this server
  std::vector<const float*> gradient_slices_;  // each gradient, in worker order
  StepListener listener_;  // told of every gradient a worker pushed, when set
  std::uint32_t shard_ = 0;
  // sync: who takes part, how many gradients a step sums, and the gradients waiting for their step
  bool barrier_ = false;
  std::vector<std::uint32_t> members_;
  std::uint32_t needed_ = 0;
  std::vector<Pending> pending_;
  std::vector<Pending> early_;  // pipelined: a member's push for the step after the one under way
  std::deque<QueuedAnswer> queued_;  // ordered answers not sent yet, in worker order
  std::vector<Awaited> awaiting_;  // in the order they were sent
  bool receipt_timer_armed_ = false;
  bool pace_timer_armed_ = false;
  // sync on several shards (meet_peers): every shard in order, and this one's index among them
  bool peers_known_ = false;
  std::uint32_t index_ = 0;
  std::vector<ShardPeer> peers_;
  std::vector<GradientRange> own_cut_chunks_;    // this shard's chunks other shards need, each once
  std::vector<std::vector<std::size_t>> sends_;  // per peer: its needs, as indices in own_cut_chunks_
  std::vector<std::size_t> from_;                // per foreign chunk: the peer that holds it
  std::vector<std::size_t> position_;            // per foreign chunk: its place in that peer's squares
  std::vector<std::size_t> squares_from_;        // per peer: how many squares it tells
  std::size_t expected_ = 0;                     // peers that tell this shard each step: all others
  std::vector<double> own_squares_;              // per own cut chunk, of the step under way
  std::vector<float> scratch_;                   // one own cut chunk of summed gradients
  // the step under way: its squares told to the peers, and the peers' squares received
  bool exchanging_ = false;
  std::vector<std::uint32_t> summed_workers_;  // whose gradients this shard's step sums, ascending
  std::vector<std::vector<double>> peer_squares_;           // per peer, as told
  std::vector<std::vector<std::uint32_t>> peer_workers_;    // per peer: whose gradients its sum holds
  std::vector<double> incoming_;  // per foreign chunk, of the step being taken
  std::vector<bool> told_;        // per peer: it told squares of this shard's workers, or may still agree
  std::vector<std::optional<ShardSquares>> ahead_;  // pipelined: per peer, squares of the next step
  std::size_t received_ = 0;
  caf::error broken_;  // the shards fell out of step: the run ends
};

}  // namespace

std::vector<std::size_t> shard_cuts(const ParameterLayout& layout, std::size_t count, std::size_t grain) {
  // Where a cut may fall: the start of an array, every `grain` floats into one, and the end.
  std::vector<std::size_t> allowed;
  for (const auto& array : layout.arrays())
    for (std::size_t at = 0; at < array.size(); at += grain) allowed.push_back(array.offset + at);
  allowed.push_back(layout.total_size());
  std::vector<std::size_t> cuts = {0};
  std::size_t from = 1;  // index in `allowed` of the first point the next cut may use
  for (std::size_t i = 1; i < count; ++i) {
    const double target = static_cast<double>(layout.total_size()) * static_cast<double>(i) / static_cast<double>(count);
    // Leave a point for every later cut and the end.
    const std::size_t last = allowed.size() - 1 - (count - i);
    if (from > last) return {};
    std::size_t best = from;
    for (std::size_t p = from; p <= last; ++p)
      if (std::fabs(static_cast<double>(allowed[p]) - target) < std::fabs(static_cast<double>(allowed[best]) - target))
        best = p;
    cuts.push_back(allowed[best]);
    from = best + 1;
  }
  cuts.push_back(layout.total_size());
  return cuts;
}

ShardPlan plan_of(const ParameterServerState& state) {
  const auto end = state.end == 0 ? state.layout.total_size() : state.end;
  return ShardPlan{state.begin, end, state.optimizer->foreign_norm_ranges()};
}

ParameterServerActor spawn_parameter_server(caf::actor_system& system,
                                            std::shared_ptr<ParameterServerState> state) {
  // Where idle scheduler threads poll, or a step helper watches, they take on half of each step.
  if (auto help = idle_help_of(system)) {
    state->optimizer->split_steps_with(help.get());
    state->step_runner = std::move(help);
  }
  state->step_helper = step_helper_of(system);  // with idle_help_of(system) set: its thread takes halves
  return system.spawn<ParameterServer>(std::move(state));
}

}  // namespace psgrad
