// Whether a checkpoint that passed its checksum fits the run about to continue from it: every field is
// checked against the run before any of it is used, since a field that does not fit would otherwise
// surface as an abort, a hang or a wrong diagnosis far from the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "model/checkpoint.hpp"

namespace psgrad {

// What the resuming run is.
struct ResumingRun {
  std::uint64_t total_steps = 0;     // iterations (sync) or optimizer steps (async, ssp) it counts to
  std::size_t train_examples = 0;    // in its training set
};

// The first field that does not fit, as "<field>: <problem>" ("workers[1].cursor: ..."); nothing when
// all fit. The optimizer's buffers are checked by the optimizer itself (Optimizer::state_problem).
std::optional<std::string> checkpoint_misfit(const TrainingCheckpoint& checkpoint, const ResumingRun& run);

// The same for one worker's stream, which a worker process checks again against its own data.
std::optional<std::string> stream_misfit(const WorkerStreamState& stream, std::size_t train_examples);

}  // namespace psgrad
