// Writes checkpoints with the run's rendered config, and checks a checkpoint against the run's layout.
#include "apps/checkpointing.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "actors/training_job.hpp"
#include "io/checkpoint_file.hpp"
#include "io/config.hpp"
#include "io/user_text.hpp"
#include "model/checked_count.hpp"
#include "model/checkpoint_fit.hpp"

namespace psgrad {

std::string interrupted_checkpoint_path(const PreparedRun& run) {
  if (!run.config.training.checkpoint_path.empty()) return run.config.training.checkpoint_path;
  return run.output->interrupted_checkpoint();
}

CheckpointDestination::CheckpointDestination(const PreparedRun& run, std::shared_ptr<const std::atomic<int>> interrupt)
    : configured_(run.config.training.checkpoint_path),
      on_interrupt_(interrupted_checkpoint_path(run)),
      interrupt_(std::move(interrupt)),
      output_(run.output) {}

std::optional<std::string> CheckpointDestination::path() const {
  if (!configured_.empty()) return configured_;
  if (!interrupt_ || interrupt_->load() == 0) return std::nullopt;
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(on_interrupt_).parent_path(), ignored);
  return on_interrupt_;
}

void CheckpointDestination::report(const Status& written, std::uint64_t iteration, const std::string& path,
                                   const std::string& detail) const {
  // A failed write is said once (a full disk fails every later one alike); the run's end says how many.
  const bool first_failure = output_->record_checkpoint(written, iteration);
  if (first_failure) {
    fmt::print(stderr, "psgrad: {}\n", cut_long_words(written.error()));
    std::fflush(stderr);
  } else if (written) {
    output_->print_note(fmt::format("psgrad: checkpoint at iteration {} written to {}{}", iteration, path, detail));
  }
}

std::function<void(const TrainingCheckpoint&)> checkpoint_writer(const PreparedRun& run,
                                                                 std::shared_ptr<const std::atomic<int>> interrupt) {
  const CheckpointDestination destination(run, std::move(interrupt));
  if (!destination.any()) return {};
  return [destination, config_text = run.config_text,
          data = run.data.train_fingerprint](const TrainingCheckpoint& checkpoint) {
    const auto path = destination.path();
    if (!path) return;
    auto complete = checkpoint;
    complete.config = config_text;
    if (!data.empty()) complete.data = data;
    destination.report(write_checkpoint(*path, complete), checkpoint.iteration, *path);
  };
}

// A checkpoint continues the run that wrote it: its data streams and dropout follow that run's seed,
// and its iteration counts that run's unit (loop iterations in sync, optimizer steps in async/ssp).
Status same_seed_and_mode(const std::string& path, const TrainingCheckpoint& checkpoint, const Config& config) {
  auto written = parse_config(checkpoint.config, path + " (the config inside the checkpoint)");
  if (!written) return Error{written.error()};
  if (written->training.seed != config.training.seed)
    return Error{fmt::format("{}: checkpoint was written with training.seed = {}, this run has {}; its data order "
                             "and dropout follow the old seed, so resume with --set training.seed={}, or start "
                             "afresh without --resume",
                             path, written->training.seed, config.training.seed, written->training.seed)};
  if (written->cluster.mode != config.cluster.mode)
    return Error{fmt::format("{}: checkpoint is from a {} run, this run is {}; its iteration {} counts {}, so "
                             "resume with --set cluster.mode={}, or start afresh without --resume",
                             path, mode_name(written->cluster.mode), mode_name(config.cluster.mode), checkpoint.iteration,
                             written->cluster.mode == TrainingMode::sync ? "loop iterations" : "optimizer steps",
                             mode_name(written->cluster.mode))};
  return success();
}

Result<std::optional<TrainingCheckpoint>> load_resume(const std::string& path, const PreparedRun& run) {
  if (path.empty()) return std::optional<TrainingCheckpoint>{};
  auto checkpoint = read_checkpoint(path);
  if (!checkpoint) return Error{checkpoint.error()};
  const auto& layout = run.layout;
  if (const auto differs = layout.mismatch(checkpoint->layout_hash, checkpoint->weights.size()))
    return Error{fmt::format("{}: checkpoint is for another model ({} for the config's model)", path, *differs)};
  if (auto same = same_seed_and_mode(path, *checkpoint, run.config); !same) return Error{same.error()};
  // Its workers' streams index into the data it was written on: on other data of the same shape they
  // would fit, and train on the wrong examples without a word.
  if (checkpoint->data)
    if (auto differs = data_difference(run.data.train_fingerprint, *checkpoint->data, "this run", "checkpoint"))
      return Error{fmt::format("{}: {}; resume on the data it was written for, or start afresh without --resume", path,
                               *differs)};
  // Every field is checked here, before any of it reaches the server, a shard or a worker process.
  const auto misfit = [&](const std::string& problem) {
    return Error{fmt::format("{}: checkpoint does not fit this run: {}", path, problem)};
  };
  ResumingRun resuming;
  resuming.total_steps = run.job().cluster.mode == TrainingMode::sync ? run.job().training.iterations
                                                            : saturating_product(run.job().training.iterations, run.job().cluster.num_workers);
  resuming.train_examples = run.data.train->count;
  if (auto problem = checkpoint_misfit(*checkpoint, resuming)) return misfit(*problem);
  auto optimizer = build_optimizer(run.job(), layout);
  if (!optimizer) return Error{optimizer.error()};
  if (auto problem = (*optimizer)->state_problem(checkpoint->optimizer)) return misfit(*problem);
  return std::optional<TrainingCheckpoint>(std::move(checkpoint).value());
}

}  // namespace psgrad
