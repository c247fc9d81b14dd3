// The typed interfaces of the ParameterServer and the DataWorker.
#pragma once

#include <vector>

#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"
#include "actors/messages.hpp"

namespace psgrad {

// Holds the weights and the optimizer. "apply" with one gradient, or with several that it sums in the
// given order, makes one optimizer step and answers with the new weights.
using ParameterServerActor = caf::typed_actor<
    caf::replies_to<apply_atom, Gradients>::with<Weights>,
    caf::replies_to<apply_atom, std::vector<Gradients>>::with<Weights>,
    caf::replies_to<weights_atom>::with<Weights>>;

// Holds a model copy and its own data stream; answers with the gradient of its next batch.
using DataWorkerActor = caf::typed_actor<caf::replies_to<compute_atom, Weights>::with<Gradients>>;

// Evaluates weight snapshots on the dev set; a request (rather than a send) gets the report back.
using EvaluatorActor = caf::typed_actor<
    caf::replies_to<evaluate_atom, Weights, std::uint64_t, bool>::with<EvaluationReport>>;

}  // namespace psgrad
