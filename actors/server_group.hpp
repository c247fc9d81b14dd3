// The parameter servers of a run behind one push/pull interface: one server, or shards that each hold
// a slice of the weights (as ps-lite's KVWorker and Slicer hide key ranges behind push and pull).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "caf/error.hpp"
#include "actors/countdown.hpp"
#include "actors/float_buffer.hpp"
#include "actors/interfaces.hpp"
#include "actors/steady_time.hpp"
#include "actors/shard_state.hpp"

namespace psgrad {

class ServerGroup {
 public:
  explicit ServerGroup(std::vector<ParameterServerActor> servers) : servers_(std::move(servers)) {}

  std::size_t size() const { return servers_.size(); }

  // Told each shard's send and answer times (steady clock, ns) of every apply: the trace's apply spans.
  using ApplyObserver = std::function<void(std::size_t shard, std::int64_t sent, std::int64_t answered)>;
  void observe_applies(ApplyObserver observer) { observer_ = std::move(observer); }
  const ParameterServerActor& first() const { return servers_.front(); }
  const std::vector<ParameterServerActor>& handles() const { return servers_; }

  // Sends the message (e.g. apply + gradients, or weights) to every server from `self` and hands
  // `then` the whole weights: with one server its answer, with shards their slices joined in layout
  // order. `failed` gets who failed ("parameter server", "parameter server shard 1") and why.
  template <class Self, class Timeout, class... Ts>
  void request(Self* self, Timeout timeout, std::function<void(Weights)> then,
               std::function<void(const std::string&, const caf::error&)> failed, Ts&&... xs) {
    const auto observer = starts_with_apply<Ts...>() ? observer_ : ApplyObserver{};
    const auto sent = steady_now_ns();
    if (servers_.size() == 1) {
      self->request(servers_[0], timeout, std::forward<Ts>(xs)...)
          .then(
              [then, observer, sent](Weights& weights) {
                if (observer) observer(0, sent, steady_now_ns());
                then(std::move(weights));
              },
              [failed](caf::error& error) { failed("parameter server", error); });
      return;
    }
    auto parts = std::make_shared<std::vector<Weights>>(servers_.size());
    const Countdown joined(servers_.size(), [this, parts, then] { then(join(*parts)); });
    for (std::size_t i = 0; i < servers_.size(); ++i)
      self->request(servers_[i], timeout, xs...)
          .then(
              [parts, joined, i, observer, sent](Weights& slice) {
                if (observer) observer(i, sent, steady_now_ns());
                (*parts)[i] = std::move(slice);
                joined();
              },
              [failed, i](caf::error& error) { failed(fmt::format("parameter server shard {}", i), error); });
  }

  // The servers' state for a checkpoint, shards joined into what one server would report (so any
  // number of shards can resume from it). `failed` as for request.
  template <class Self, class Timeout>
  void request_state(Self* self, Timeout timeout, std::function<void(ServerState)> then,
                     std::function<void(const std::string&, const caf::error&)> failed) {
    auto parts = std::make_shared<std::vector<ServerState>>(servers_.size());
    const Countdown joined(servers_.size(), [parts, then, failed] {
      auto whole = join_server_states(*parts);
      if (!whole) return failed("parameter server shards", caf::make_error(caf::sec::runtime_error, whole.error()));
      then(std::move(whole).value());
    });
    for (std::size_t i = 0; i < servers_.size(); ++i)
      self->request(servers_[i], timeout, state_atom::value)
          .then(
              [parts, joined, i](ServerState& state) {
                (*parts)[i] = std::move(state);
                joined();
              },
              [failed, i, single = servers_.size() == 1](caf::error& error) {
                failed(single ? std::string("parameter server") : fmt::format("parameter server shard {}", i), error);
              });
  }

 private:
  template <class... Ts>
  static constexpr bool starts_with_apply() {
    if constexpr (sizeof...(Ts) == 0) return false;
    else return std::is_same_v<std::decay_t<std::tuple_element_t<0, std::tuple<Ts...>>>, apply_atom>;
  }

  Weights join(const std::vector<Weights>& parts);

  std::vector<ParameterServerActor> servers_;
  std::unique_ptr<BufferPool> pool_;  // joined weights
  ApplyObserver observer_;
};

}  // namespace psgrad
