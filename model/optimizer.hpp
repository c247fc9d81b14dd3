// The optimizer interface: one step from one or more gradient buffers laid out like the weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/norm_chunks.hpp"
#include "model/parameter_layout.hpp"
#include "model/schedule.hpp"
#include "model/two_part_runner.hpp"

namespace psgrad {

// Everything an optimizer needs to continue exactly where it stopped (for checkpoints).
struct OptimizerState {
  std::vector<float> buffers;         // e.g. Adam's first and second moments, averages
  std::vector<std::uint64_t> counts;  // step counter per parameter array
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;

  // One optimizer step from the sum of `count` gradient buffers, added element by element in the
  // given order (so a run is deterministic). Reads the weights from `source` and writes the new ones
  // to `target`, which may be the same buffer: a parameter server whose old weights are still being
  // read by a worker writes the step elsewhere without copying them first. Weights and gradients hold
  // the floats the optimizer owns (all of them unless restricted); foreign_squares holds one sum of
  // squares per foreign_norm_ranges() range, of the gradients' sum (range_squares), and may be null
  // when there are none.
  void apply_gradients(const float* source, float* target, const float* const* gradients, std::size_t count,
                       const double* foreign_squares = nullptr) {
    step(source, target, gradients, count, foreign_squares);
  }
  // One step in place from one gradient buffer.
  void apply_gradients(float* weights, const float* gradients) { apply_gradients(weights, weights, &gradients, 1); }

  // False when the last step met a NaN or infinite gradient or produced NaN or infinite weights: the
  // run has diverged (the check rides along the step's own passes).
  virtual bool last_step_finite() const = 0;

  // Makes this optimizer own only the floats [begin, end) of its layout (a server shard), cut on the
  // norm grid (norm_chunks.hpp): from then on weights and gradients hold just those floats. An array
  // cut between shards is still clipped by the norm of all of it, bit for bit as without shards, from
  // the sums of squares of the parts held elsewhere (foreign_norm_ranges). Its state() covers the
  // floats it owns and a step count for every array. False when it cannot (then nothing changed).
  virtual bool restrict_to(std::size_t /*begin*/, std::size_t /*end*/) { return false; }

  // The gradient ranges outside the owned floats whose sums of squares each step needs, in the order
  // apply_gradients takes them: the norm chunks of arrays cut at this optimizer's ends. Empty unless
  // restricted.
  virtual std::vector<GradientRange> foreign_norm_ranges() const { return {}; }

  // From now on each step's passes may be split in two, the second half run by `runner` (which must
  // outlive this optimizer's steps; null: every step on the calling thread). Results are bit for bit
  // the same however the halves are run.
  virtual void split_steps_with(TwoPartRunner* /*runner*/) {}

  // Parameter averages (EMA), when the optimizer keeps them; nullptr otherwise.
  virtual const float* averages() const { return nullptr; }

  virtual OptimizerState state() const = 0;
  // False when the state does not fit this optimizer's layout.
  virtual bool set_state(const OptimizerState& state) = 0;
  // Why a state from a file cannot be this optimizer's, as "<field>: <problem>" (buffers of another
  // size, a moment that is not finite, a second moment below 0), or nothing when set_state may take it.
  virtual std::optional<std::string> state_problem(const OptimizerState& state) const = 0;

  // From now on the learning rate of step n (this optimizer's n-th, counted from 0 and restored with
  // its state) is schedule->at(n), as Thinc's optimizer draws its next learn_rate after each update.
  void set_learn_rate_schedule(std::unique_ptr<Schedule> schedule) { schedule_ = std::move(schedule); }

 protected:
  // The scheduled learning rate of step n, or the fixed one when there is no schedule.
  double learn_rate_at(std::uint64_t step, double fixed) { return schedule_ ? schedule_->at(step) : fixed; }

 private:
  // apply_gradients' step, each optimizer's own (apply_gradients stays one name for every overload).
  virtual void step(const float* source, float* target, const float* const* gradients, std::size_t count,
                    const double* foreign_squares) = 0;

  std::unique_ptr<Schedule> schedule_;
};

}  // namespace psgrad
