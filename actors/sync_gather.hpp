// The sync barrier's gathering: who takes part, how many gradients a step sums, and the pushes waiting
// for their step (a pipelined worker's second push apart). Held by the sync ParameterServer.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "caf/typed_response_promise.hpp"
#include "payloads/messages.hpp"

namespace psgrad {

class SyncGather {
 public:
  struct Pending {
    Gradients gradients;
    caf::typed_response_promise<Weights> promise;
    bool waiting = false;
    bool remote = false;  // from another host: its answer may wait its turn (cluster.ordered_answers)
  };

  // The members (the driver's list) and how many of their gradients a step sums. Slots exist for
  // members only, so a worker index from the wire never sizes them.
  void set_members(std::vector<std::uint32_t> members, std::uint32_t needed) {
    members_ = std::move(members);
    needed_ = needed;
    std::uint32_t largest = 0;
    for (const auto k : members_) largest = std::max(largest, k + 1);
    if (pending_.size() < largest) pending_.resize(largest);
    if (early_.size() < largest) early_.resize(largest);
  }
  bool member(std::size_t worker) const {
    return std::find(members_.begin(), members_.end(), worker) != members_.end();
  }
  // A member's slot for the step under way, and (pipelined) for the one after it.
  Pending& pending(std::uint32_t member) { return pending_[member]; }
  Pending& early(std::uint32_t member) { return early_[member]; }
  std::vector<Pending>& pending() { return pending_; }
  std::vector<Pending>& early() { return early_; }

  // Enough gradients are in for a step.
  bool ready() const { return needed_ != 0 && gathered() >= needed_; }
  // Backup workers: a step takes fewer gradients than there are members, the first to arrive.
  bool takes_first_arrivals() const { return needed_ != 0 && needed_ < members_.size(); }
  // Every one of `workers` has a gradient waiting.
  bool holds_all(const std::vector<std::uint32_t>& workers) const {
    return std::all_of(workers.begin(), workers.end(),
                       [&](std::uint32_t k) { return k < pending_.size() && pending_[k].waiting; });
  }
  std::size_t gathered() const {
    std::size_t count = 0;
    for (const auto& slot : pending_) count += slot.waiting ? 1 : 0;
    return count;
  }
  // The workers whose gradients wait, ascending.
  std::vector<std::uint32_t> waiting_workers() const {
    std::vector<std::uint32_t> workers;
    for (std::size_t k = 0; k < pending_.size(); ++k)
      if (pending_[k].waiting) workers.push_back(static_cast<std::uint32_t>(k));
    return workers;
  }
  // The waiting gradients, in worker order (the order a step sums them in).
  const std::vector<const float*>& waiting_gradients() {
    slices_.clear();
    for (const auto& slot : pending_)
      if (slot.waiting) slices_.push_back(slot.gradients.values.data());
    return slices_;
  }
  // The first non-finite loss of the waiting gradients, if any: the one a divergence message names.
  float step_loss() const {
    float loss = 0.0f;
    for (const auto& slot : pending_)
      if (slot.waiting && std::isfinite(loss)) loss = slot.gradients.loss;
    return loss;
  }

 private:
  std::vector<std::uint32_t> members_;
  std::uint32_t needed_ = 0;
  std::vector<Pending> pending_;
  std::vector<Pending> early_;
  std::vector<const float*> slices_;
};

}  // namespace psgrad
