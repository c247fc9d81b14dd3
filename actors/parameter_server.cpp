#include "actors/parameter_server.hpp"

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/result.hpp"
#include "caf/sec.hpp"

namespace psgrad {

namespace {

class ParameterServer : public ParameterServerActor::base {
 public:
  ParameterServer(caf::actor_config& config, std::shared_ptr<ParameterServerState> state)
      : ParameterServerActor::base(config),
        state_(std::move(state)),
        pool_(state_->layout.total_size()),
        sum_(state_->layout.total_size(), 0.0f) {
    current_ = pool_.acquire();
    *current_ = state_->weights;
  }

  behavior_type make_behavior() override {
    return {
        [this](apply_atom, const Gradients& gradients) -> caf::result<Weights> {
          if (auto error = check(gradients)) return error;
          step(gradients.values.data());
          return snapshot();
        },
        [this](apply_atom, const std::vector<Gradients>& all) -> caf::result<Weights> {
          if (all.empty()) return caf::make_error(caf::sec::invalid_argument, "no gradients to apply");
          for (const auto& gradients : all)
            if (auto error = check(gradients)) return error;
          // Summed in the given (worker) order so that the result is deterministic.
          std::copy(all[0].values.data(), all[0].values.data() + sum_.size(), sum_.begin());
          for (std::size_t k = 1; k < all.size(); ++k) {
            const float* g = all[k].values.data();
            for (std::size_t i = 0; i < sum_.size(); ++i) sum_[i] += g[i];
          }
          step(sum_.data());
          return snapshot();
        },
        [this](weights_atom) -> Weights { return snapshot(); },
        [this](state_atom) -> ServerState { return ServerState{snapshot(), state_->optimizer->state()}; },
    };
  }

 private:
  caf::error check(const Gradients& gradients) const {
    if (gradients.layout_hash != state_->layout.hash() ||
        gradients.values.size() != state_->layout.total_size())
      return caf::make_error(caf::sec::invalid_argument,
                             fmt::format("gradients from worker {} do not fit the model layout "
                                         "({} floats, layout {:016x}; expected {} floats, layout {:016x})",
                                         gradients.worker, gradients.values.size(), gradients.layout_hash,
                                         state_->layout.total_size(), state_->layout.hash()));
    return caf::error{};
  }

  void step(const float* gradients) {
    // Weights already handed out stay immutable: write in place only when nobody else holds them.
    if (current_.use_count() > 2) {
      auto next = pool_.acquire();
      std::copy(current_->begin(), current_->end(), next->begin());
      current_ = std::move(next);
    }
    state_->optimizer->apply_gradients(current_->data(), gradients);
    ++state_->version;
  }

  Weights snapshot() const {
    return Weights{state_->version, state_->layout.hash(), FloatBuffer(current_)};
  }

  std::shared_ptr<ParameterServerState> state_;
  BufferPool pool_;
  std::shared_ptr<std::vector<float>> current_;  // held by pool_ too
  std::vector<float> sum_;
};

}  // namespace

ParameterServerActor spawn_parameter_server(caf::actor_system& system,
                                            std::shared_ptr<ParameterServerState> state) {
  return system.spawn<ParameterServer>(std::move(state));
}

}  // namespace psgrad
