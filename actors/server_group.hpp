// The parameter servers of a run behind one push/pull interface: one server, or shards that each hold
// a slice of the weights and receive only that slice of each gradient (as ps-lite's KVWorker and
// Slicer hide key ranges behind push and pull).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "caf/error.hpp"
#include "actors/answer_watch.hpp"
#include "actors/countdown.hpp"
#include "payloads/float_buffer.hpp"
#include "actors/gradient_slicer.hpp"
#include "actors/interfaces.hpp"
#include "actors/shard_state.hpp"
#include "model/job.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

class ServerGroup {
 public:
  explicit ServerGroup(std::vector<ParameterServerActor> servers)
      : servers_(std::move(servers)),
        slicer_(std::make_shared<std::optional<GradientSlicer>>()),
        joiner_(std::make_shared<SliceJoiner>()),
        watch_(std::make_shared<AnswerWatch>(servers_.size())) {}
  // Its answer handlers share the group's state: a copy would share it too, so there is one owner.
  ServerGroup(const ServerGroup&) = delete;
  ServerGroup& operator=(const ServerGroup&) = delete;
  ServerGroup(ServerGroup&&) = default;
  ServerGroup& operator=(ServerGroup&&) = default;

  std::size_t size() const { return servers_.size(); }

  // How messages name server i of `count`: "parameter server" when it is the only one, else its shard.
  static std::string server_name(std::size_t count, std::size_t i) {
    return count == 1 ? std::string("parameter server") : fmt::format("parameter server shard {}", i);
  }

  // Pushes to the servers on these nodes (processes on this host) go through shared memory.
  void use_shared_memory_with(const std::vector<caf::node_id>& nodes) {
    shared_memory_.assign(servers_.size(), false);
    for (std::size_t i = 0; i < servers_.size(); ++i)
      shared_memory_[i] = servers_[i] && std::find(nodes.begin(), nodes.end(), servers_[i].node()) != nodes.end();
  }

  // Whether the first server's part of a push goes through shared memory.
  bool first_through_shared_memory() const { return !shared_memory_.empty() && shared_memory_.front(); }

  const ParameterServerActor& first() const { return servers_.front(); }
  const std::vector<ParameterServerActor>& handles() const { return servers_; }

  // Sync with cluster.ordered_answers and servers in another process: each server sends the next
  // worker's answer once this one says it has its own (AnswerPacer), so every worker, whatever its
  // model, receipts an answer before it computes. Answers through shared memory are never held back.
  bool wants_receipt(const ClusterSection& cluster, const caf::node_id& here, const Weights& answer) const {
    return cluster.ordered_answers && cluster.mode == TrainingMode::sync && !servers_.empty() &&
           servers_.front().node() != here && !answer.values.arrived_through_shared_memory();
  }
  template <class Self>
  void send_receipts(Self* self, std::uint32_t worker, std::uint64_t version) const {
    for (const auto& server : servers_) self->send(server, received_atom::value, worker, version);
  }

  // `failed` gets who failed ("parameter server", "parameter server shard 1") and why.
  using FailureHandler = std::function<void(const std::string&, const caf::error&)>;

  // Asks every shard once what it holds (its ShardPlan), which apply needs to send each only its part
  // of a gradient, then runs `then`; with one server, or when asked before, there is nothing to ask.
  template <class Self, class Timeout>
  void prepare(Self* self, Timeout timeout, std::function<void()> then, FailureHandler failed) {
    if (servers_.size() == 1 || *slicer_) return then();
    ask_every_server<ShardPlan>(
        [&](std::size_t i) { return self->request(servers_[i], timeout, plan_atom::value); },
        [prepared = slicer_, then, failed](std::vector<ShardPlan>& plans) {
          auto slicer = GradientSlicer::make(std::move(plans));
          if (!slicer)
            return failed("parameter server shards", caf::make_error(caf::sec::invalid_argument, slicer.error()));
          prepared->emplace(std::move(slicer).value());
          then();
        },
        failed);
  }

  // What each shard holds, once prepared (else empty).
  const std::vector<ShardPlan>& plans() const {
    static const std::vector<ShardPlan> none;
    return *slicer_ ? (*slicer_)->plans() : none;
  }

  // Sync training: the shards gather each step's gradients and exchange the sums of squares of their
  // sum, so the squares of a single push would go unused: pushes carry none.
  void push_without_squares() { squares_ = false; }

  // Pushes a gradient and hands `then` the whole new weights. One server gets it as it is; each shard
  // only its part (GradientSlicer), after prepare.
  template <class Self, class Timeout>
  void apply(Self* self, Timeout timeout, std::function<void(Weights)> then, FailureHandler failed, Gradients gradients) {
    if (servers_.size() == 1) {
      mark_for_shared_memory(gradients, 0);
      return gather(then, failed,
                    [&](std::size_t) { return self->request(servers_[0], timeout, apply_atom::value, std::move(gradients)); });
    }
    if (!*slicer_)
      return failed("parameter server shards",
                    caf::make_error(caf::sec::runtime_error, "gradients pushed before the shards said what they hold"));
    auto parts = (*slicer_)->slice(gradients, squares_);
    if (!parts) return failed("parameter server shards", caf::make_error(caf::sec::invalid_argument, parts.error()));
    gather(then, failed, [&](std::size_t i) {
      mark_for_shared_memory((*parts)[i], i);
      return self->request(servers_[i], timeout, apply_atom::value, std::move((*parts)[i]));
    });
  }

  // Who owes an answer to apply or request and has said nothing for longer than `timeout`
  // ("parameter server", "parameter server shard 1"). A worker pushes every step without a CAF
  // timeout and asks this from a periodic tick instead: each timed request costs CAF's clock thread
  // two wake-ups (the timeout set, then cancelled), and with every core computing those wake-ups
  // pre-empted a worker about once per step.
  std::optional<std::string> silent_server(std::chrono::nanoseconds timeout) const {
    const auto silent = watch_->silent(steady_now_ns(), timeout);
    if (!silent) return std::nullopt;
    return server_name(servers_.size(), *silent);
  }

  // The answers owed count again from now (AnswerWatch::restart).
  void restart_answer_clocks() { watch_->restart(steady_now_ns()); }

  // Sends the message (e.g. weights_atom) to every server from `self` and hands `then` the whole
  // weights: with one server its answer, with shards their slices joined in layout order.
  template <class Self, class Timeout, class... Ts>
  void request(Self* self, Timeout timeout, std::function<void(Weights)> then, FailureHandler failed, Ts&&... xs) {
    gather(then, failed, [&](std::size_t i) { return self->request(servers_[i], timeout, xs...); });
  }

  // The servers' state for a checkpoint, shards joined into what one server would report (so any
  // number of shards can resume from it). `failed` as for request.
  template <class Self, class Timeout>
  void request_state(Self* self, Timeout timeout, std::function<void(ServerState)> then, FailureHandler failed) {
    ask_every_server<ServerState>(
        [&](std::size_t i) { return self->request(servers_[i], timeout, state_atom::value); },
        [then, failed](std::vector<ServerState>& parts) {
          auto whole = join_server_states(parts);
          if (!whole) return failed("parameter server shards", caf::make_error(caf::sec::runtime_error, whole.error()));
          then(std::move(whole).value());
        },
        failed);
  }

 private:
  // Joins the shards' slices into whole weights, in buffers it recycles once their holders let go.
  class SliceJoiner {
   public:
    Weights join(const std::vector<Weights>& parts);

   private:
    std::unique_ptr<BufferPool> pool_;  // sized by the first join
  };

  // Sends with `send(i)` to every server and joins their answers (see request).
  template <class Send>
  void gather(std::function<void(Weights)> then, FailureHandler failed, Send send) {
    if (servers_.size() == 1) {
      watch_->asked(0, steady_now_ns());
      send(0).then(
          [then, watch = watch_](Weights& weights) {
            watch->answered(0, steady_now_ns());
            then(std::move(weights));
          },
          [failed, watch = watch_](caf::error& error) {
            watch->answered(0, steady_now_ns());
            failed(server_name(1, 0), error);
          });
      return;
    }
    ask_every_server<Weights>(
        send, [joiner = joiner_, then](std::vector<Weights>& parts) { then(joiner->join(parts)); }, failed, watch_);
  }

  // Sends ask(i) to every server i and, once all have answered, hands `joined` their answers in server
  // order; a failure goes to `failed` with the server's name instead (and `joined` never runs). With a
  // watch, each request counts as owed from when it is sent until its answer comes.
  template <class Answer, class Ask, class Joined>
  void ask_every_server(const Ask& ask, Joined joined, const FailureHandler& failed,
                        const std::shared_ptr<AnswerWatch>& watch = nullptr) {
    auto answers = std::make_shared<std::vector<Answer>>(servers_.size());
    const Countdown all_in(servers_.size(), [answers, joined = std::move(joined)] { joined(*answers); });
    const auto now = watch ? steady_now_ns() : 0;
    for (std::size_t i = 0; i < servers_.size(); ++i) {
      if (watch) watch->asked(i, now);
      ask(i).then(
          [answers, all_in, i, watch](Answer& answer) {
            if (watch) watch->answered(i, steady_now_ns());
            (*answers)[i] = std::move(answer);
            all_in();
          },
          [failed, i, count = servers_.size(), watch](caf::error& error) {
            if (watch) watch->answered(i, steady_now_ns());
            failed(server_name(count, i), error);
          });
    }
  }

  void mark_for_shared_memory(Gradients& gradients, std::size_t server) const {
    if (server < shared_memory_.size() && shared_memory_[server])
      gradients.values = gradients.values.through_shared_memory();
  }

  // What the answer handlers touch they share, never reach through `this`: they run when the answers
  // come, and by then the group may have moved or gone.
  std::vector<ParameterServerActor> servers_;
  std::shared_ptr<std::optional<GradientSlicer>> slicer_;  // shards: what each takes of a gradient, once prepared
  std::shared_ptr<SliceJoiner> joiner_;
  bool squares_ = true;  // pushes carry their foreign chunks' sums of squares
  std::shared_ptr<AnswerWatch> watch_;
  std::vector<bool> shared_memory_;  // per server: on this host, taking payloads through shared memory
};

}  // namespace psgrad
