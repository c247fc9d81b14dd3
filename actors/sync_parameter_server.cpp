// The sync ParameterServer: the barrier sits where the gradients arrive, so a gradient goes worker ->
// server -> worker. A step is taken once the gradients it needs are in (SyncGather), agreed with the
// other shards where there are several (ShardAgreement), and its answers to other hosts may be paced
// (AnswerPacer).
#include "actors/sync_parameter_server.hpp"

#include "actors/answer_pacer.hpp"
#include "actors/server_actor.hpp"
#include "actors/shard_agreement.hpp"
#include "actors/sync_gather.hpp"

namespace psgrad {

namespace {

// To itself: the oldest ordered answer's receipt_wait ran out (AnswerPacer).
using receipt_timer_atom = caf::atom_constant<caf::atom("rcpttimer")>;
// To itself: time to look whether the ordered answers out have left its sockets (AnswerPacer::pace).
using pace_atom = caf::atom_constant<caf::atom("pace")>;
using SyncServerActor =
    ParameterServerActor::extend<caf::reacts_to<receipt_timer_atom>, caf::reacts_to<pace_atom>>;

class SyncParameterServer : public ServerActor<SyncServerActor::base> {
 public:
  SyncParameterServer(caf::actor_config& config, std::shared_ptr<ParameterServerState> setup)
      : ServerActor(config, *setup),
        pipelined_(setup->pipelined),
        ordered_answers_(setup->ordered_answers),
        step_helper_(setup->step_helper),
        on_step_workers_(setup->on_step_workers),
        pacer_([this](std::chrono::nanoseconds after) { delayed_send(this, after, receipt_timer_atom::value); },
               [this](std::chrono::nanoseconds after) {
                 if (after.count() == 0) send(this, pace_atom::value);
                 else delayed_send(this, after, pace_atom::value);
               }) {}

  behavior_type make_behavior() override {
    return with_shared_handlers(
        // A sync push carries no sums of squares: the shards exchange those of the step's sum.
        [this](apply_atom, Gradients& gradients) -> caf::result<Weights> {
          if (auto error = check(gradients, false)) return error;
          return gather(std::move(gradients));
        },
        [this](barrier_atom, std::vector<std::uint32_t>& members, std::uint32_t needed) {
          gather_.set_members(std::move(members), needed);
          pacer_.send_every_answer();
          // A worker no longer listed will not be waited for: what it sent is dropped with it, unless
          // the step already summed it for the squares told to the other shards.
          for (std::size_t k = 0; k < gather_.pending().size() && !agreement_.open_step(); ++k)
            if (gather_.pending()[k].waiting && !gather_.member(k)) answer_dropped(gather_.pending()[k]);
          for (std::size_t k = 0; k < gather_.early().size(); ++k)
            if (gather_.early()[k].waiting && !gather_.member(k)) answer_dropped(gather_.early()[k]);
          take_step_if_ready();
          return gather_.waiting_workers();
        },
        [this](peers_atom, std::uint32_t index, std::vector<ShardPeer>& peers,
               const std::vector<ShardPlan>& plans) -> caf::result<bool> {
          if (peers.size() != plans.size())
            return refuse(fmt::format("told {} peers with {} plans, itself as shard {}", peers.size(), plans.size(),
                                      index));
          if (auto refused = agreement_.meet(index, plans, plan_)) return refuse(std::move(*refused));
          peers_ = std::move(peers);
          peers_[index] = ShardPeer{};  // it never tells itself, and need not keep itself alive
          pacer_.answer_at_once(peers_.size());
          return true;
        },
        [this](squares_atom, ShardSquares& told) {
          if (broken_) return;
          const auto from = told.shard;
          if (auto refused = agreement_.receive(std::move(told), store_.version(), pipelined_))
            return refuse_squares(from, *refused);
          if (agreement_.open_step() || follows_first_shard()) take_step_if_ready();
        },
        [this](received_atom, std::uint32_t worker, std::uint64_t version) { pacer_.received(worker, version); },
        [this](receipt_timer_atom) { pacer_.receipt_wait_ran_out(); },
        [this](pace_atom) { pacer_.pace(); });
  }

 private:
  using Pending = SyncGather::Pending;

  static caf::error refuse(std::string why) { return caf::make_error(caf::sec::invalid_argument, std::move(why)); }

  void on_exit() override {
    ServerActor::on_exit();
    peers_.clear();
    gather_ = SyncGather{};
    held_late_.clear();
    pacer_.forget();
  }

  caf::result<Weights> gather(Gradients gradients) {
    if (broken_) return broken_;
    const auto worker = gradients.worker;
    const bool agreeing = agreement_.open_step();
    // From a worker not (or no longer) listed: dropped, and it computes from the current weights.
    if (!gather_.member(worker)) return drop(gradients);
    auto& slot = gather_.pending(worker);
    // Pipelined: a member's second push, for the step after the one under way, waits its turn.
    if (pipelined_ && (slot.waiting || agreeing) && !gather_.early(worker).waiting)
      return hold(gather_.early(worker), std::move(gradients));
    // From weights a step ago (a backup worker's late gradient): dropped. So is one that comes while
    // the shards exchange the squares of a sum that does not hold it (a worker that just joined).
    if (!fits_step(gradients.version) || slot.waiting) return drop(gradients);
    // It comes while the shards exchange the squares of a sum that does not hold it (a backup worker's
    // late gradient, or a worker that just joined): answered with the weights of that step once taken, as
    // the other shards answer it, so that no worker computes from slices of two versions.
    if (agreeing) return hold_until_step(std::move(gradients));
    auto promise = hold(slot, std::move(gradients));
    take_step_if_ready();
    return promise;
  }

  Weights drop(const Gradients& gradients) {
    tell(gradients, 0, 0);
    return answer_to(gradients, snapshot());
  }

  // Whether a gradient from weights of `version` may join the step from the store's version: computed
  // from those weights, or pipelined, from the weights a step older.
  bool fits_step(std::uint64_t version) const {
    return version == store_.version() || (pipelined_ && version + 1 == store_.version());
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
    for (std::size_t k = 0; k < gather_.early().size(); ++k) {
      auto& early = gather_.early()[k];
      if (!early.waiting) continue;
      if (fits_step(early.gradients.version) && gather_.member(k)) {
        gather_.pending()[k] = std::move(early);
        promoted = true;
      } else {
        answer_dropped(early);
      }
      early = Pending{};
    }
    if (promoted) take_step_if_ready();
  }

  void answer_dropped(Pending& slot) {
    slot.promise.deliver(drop(slot.gradients));
    slot = Pending{};
  }

  // With backup workers the step takes the first `needed` gradients to arrive; they are summed in
  // worker order so that the result does not depend on the order they came in. Several shards agree
  // on the step's workers and squares first (ShardAgreement).
  void take_step_if_ready() {
    if (broken_) return;
    if (!agreement_.open_step()) {
      if (follows_first_shard()) {
        if (!take_first_shards_workers()) return;
      } else if (!gather_.ready()) {
        return;
      }
      if (store_.sharded()) {
        if (!agreement_.known())
          return fail_step(caf::make_error(
              caf::sec::runtime_error,
              fmt::format("a sync step on server shard {} must agree with the other shards, but it was not told "
                          "its peers",
                          shard_)));
        tell_squares(gather_.waiting_workers());
      }
    }
    if (agreement_.open_step() && !agree()) return;  // the step waits for the other shards
    const auto& gradients = gather_.waiting_gradients();
    const auto& foreign_squares = agreement_.foreign_squares();
    agreement_.close();
    // The shards agreed on no gradient at all (each dropped its own): no step; they gather again.
    if (gradients.empty()) return answer_held_late();
    const auto started = steady_now_ns();
    // A plain sync step: every worker now waits for it, so a core is free for its halves.
    if (!pipelined_ && step_helper_) step_helper_->wake();
    bool into_slot = false;  // the first answer through shared memory is sent from it; the others copy it
    for (const auto& slot : gather_.pending()) into_slot = into_slot || (slot.waiting && answered_in_place(slot.gradients));
    if (on_step_workers_) on_step_workers_(store_.version(), gather_.waiting_workers());
    const auto error = step(gradients.data(), gradients.size(), foreign_squares.data(), gather_.step_loss(), into_slot);
    answer_step(error, static_cast<std::uint32_t>(gradients.size()), started);
    answer_held_late();
    pacer_.send_next();
    if (!pipelined_) return;
    if (error) return answer_every_one(gather_.early(), error);
    if (store_.sharded())
      if (auto refused = agreement_.take_told_ahead(store_.version()))
        return refuse_squares(refused->first, refused->second);
    promote_early();
  }

  // Every gradient the step summed is answered with the new weights (or the step's error).
  void answer_step(const caf::error& error, std::uint32_t summed, std::int64_t started) {
    auto weights = error ? Weights{} : snapshot();
    // Sent to several workers through shared memory, the weights' checksum is taken once, not per answer.
    std::size_t through_shared_memory = 0;
    for (const auto& slot : gather_.pending())
      through_shared_memory += slot.waiting && slot.gradients.values.arrived_through_shared_memory() ? 1 : 0;
    if (!error && through_shared_memory > 1) weights.values = weights.values.with_checksum();
    for (auto& slot : gather_.pending()) {
      if (!slot.waiting) continue;
      if (error) {
        slot.promise.deliver(error);
      } else {
        tell(slot.gradients, summed, started);
        auto answer = answer_to(slot.gradients, weights);
        if (ordered_answers_ && slot.remote) pacer_.queue(std::move(slot.promise), std::move(answer), slot.gradients.worker);
        else slot.promise.deliver(std::move(answer));
      }
      slot = Pending{};
    }
  }

  // Every gradient waiting in `slots` is answered with `error`.
  static void answer_every_one(std::vector<Pending>& slots, const caf::error& error) {
    for (auto& slot : slots) {
      if (!slot.waiting) continue;
      slot.promise.deliver(error);
      slot = Pending{};
    }
  }

  // Backup workers on several shards: the first gradients to reach one shard need not be the first to
  // reach another, so shard 0 chooses each step's workers and the others sum the ones it told them.
  bool follows_first_shard() const {
    return store_.sharded() && agreement_.known() && agreement_.index() != 0 && gather_.takes_first_arrivals();
  }

  // Once shard 0 told its step's workers and each of their gradients is here, the others are dropped as
  // late: true when the step can open. A chosen worker the driver has since dropped (lost before its
  // push reached this shard) is left out; shard 0 then narrows its sum to the same workers.
  bool take_first_shards_workers() {
    const auto* told = agreement_.workers_told_by(0);
    if (!told) return false;
    std::vector<std::uint32_t> chosen;
    for (const auto k : *told)
      if (gather_.member(k)) chosen.push_back(k);
    if (!gather_.holds_all(chosen)) return false;
    for (std::size_t k = 0; k < gather_.pending().size(); ++k)
      if (gather_.pending()[k].waiting &&
          !std::binary_search(chosen.begin(), chosen.end(), static_cast<std::uint32_t>(k))) {
        held_late_.push_back(std::move(gather_.pending()[k]));
        gather_.pending()[k] = Pending{};
      }
    return true;
  }

  caf::typed_response_promise<Weights> hold_until_step(Gradients gradients) {
    held_late_.emplace_back();
    return hold(held_late_.back(), std::move(gradients));
  }

  // The gradients a step did not take, answered with its weights.
  void answer_held_late() {
    for (auto& slot : held_late_) answer_dropped(slot);
    held_late_.clear();
  }

  // This shard's squares of the gathered gradients' sum, and the workers they came from, to every peer.
  void tell_squares(std::vector<std::uint32_t> workers) {
    const auto& gradients = gather_.waiting_gradients();
    for (auto& [peer, told] : agreement_.open(store_.version(), std::move(workers), gradients.data(),
                                              gradients.size(), store_.begin()))
      send(peers_[peer], squares_atom::value, std::move(told));
  }

  // True once every peer told squares of the very gradients this shard sums; a peer whose sum lacks
  // some of them makes this shard drop those and tell again.
  bool agree() {
    while (agreement_.narrow()) {
      const auto& kept = agreement_.workers();
      for (std::size_t k = 0; k < gather_.pending().size(); ++k)
        if (gather_.pending()[k].waiting &&
            !std::binary_search(kept.begin(), kept.end(), static_cast<std::uint32_t>(k)))
          answer_dropped(gather_.pending()[k]);
      tell_squares(kept);
    }
    return agreement_.agreed();
  }

  void refuse_squares(std::uint32_t from, const std::string& why) {
    fail_step(caf::make_error(caf::sec::runtime_error,
                              fmt::format("server shard {} refused the sums of squares from shard {}: {}",
                                          agreement_.index(), from, why)));
  }

  // The shards no longer agree on a step: every gradient waiting is answered with the error, and so is
  // every later one (the run ends).
  void fail_step(caf::error error) {
    broken_ = error;
    agreement_.close();
    pacer_.send_every_answer();
    answer_every_one(gather_.pending(), error);
    answer_every_one(gather_.early(), error);
    answer_every_one(held_late_, error);
    held_late_.clear();
    agreement_.forget_told_ahead();
  }

  const bool pipelined_;
  const bool ordered_answers_;
  std::shared_ptr<StepHelper> step_helper_;
  std::function<void(std::uint64_t, const std::vector<std::uint32_t>&)> on_step_workers_;
  SyncGather gather_;
  std::vector<Pending> held_late_;  // gradients a step under way does not sum, answered once it is taken
  ShardAgreement agreement_;
  AnswerPacer pacer_;
  std::vector<ShardPeer> peers_;  // every shard in order (sync on several shards)
  caf::error broken_;  // the shards fell out of step: the run ends
};

}  // namespace

ParameterServerActor spawn_sync_parameter_server(caf::actor_system& system,
                                                 std::shared_ptr<ParameterServerState> state) {
  return caf::actor_cast<ParameterServerActor>(system.spawn<SyncParameterServer>(std::move(state)));
}

}  // namespace psgrad
