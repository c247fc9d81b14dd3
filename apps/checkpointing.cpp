// Writes checkpoints with the run's rendered config, and checks a checkpoint against the run's layout.
#include "apps/checkpointing.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "actors/training_job.hpp"
#include "io/checkpoint_file.hpp"
#include "io/config.hpp"
#include "io/user_text.hpp"
#include "model/checkpoint_tables.hpp"

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

std::uint64_t table_floats(const SparseModel& model) {
  std::uint64_t floats = 0;
  for (const auto& field : model.fields()) floats += field.rows * field.width;
  return floats;
}

std::function<void(const TrainingCheckpoint&)> checkpoint_writer(const PreparedRun& run,
                                                                 std::shared_ptr<const std::atomic<int>> interrupt,
                                                                 std::uint64_t table_floats) {
  const CheckpointDestination destination(run, std::move(interrupt));
  if (!destination.any()) return {};
  return [destination, config_text = run.config_text, data = run.data.train_fingerprint,
          table_floats](const TrainingCheckpoint& checkpoint) {
    const auto path = destination.path();
    if (!path) return;
    std::string detail;
    if (checkpoint.tables) {
      const auto size = table_state_size(checkpoint);
      const double share = table_floats > 0 ? 100.0 * static_cast<double>(size.row_floats) / table_floats : 0.0;
      detail = fmt::format(" ({} touched table rows, {:.1f}% of the tables' nV x width)", size.rows, share);
    }
    // A copy only when something is missing: the tables' collector fills both, the dense driver neither.
    const bool complete = !checkpoint.config.empty() && (checkpoint.data || data.empty());
    if (complete) {
      destination.report(write_checkpoint(*path, checkpoint), checkpoint.iteration, *path, detail);
      return;
    }
    auto completed = checkpoint;
    if (completed.config.empty()) completed.config = config_text;
    if (!completed.data && !data.empty()) completed.data = data;
    destination.report(write_checkpoint(*path, completed), checkpoint.iteration, *path, detail);
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

namespace {

// A checkpoint written while the optimizer kept no averages (optimizer.use_averages false, the default
// before it became Thinc's true) resumed by one that keeps them: the averages start from its weights.
void start_missing_averages(TrainingCheckpoint& checkpoint, const TrainingJob& job, const ParameterLayout& layout) {
  auto optimizer = build_optimizer(job, layout);
  if (!optimizer || !(*optimizer)->averages()) return;
  const std::size_t expected = (*optimizer)->state().buffers.size();
  const std::size_t weights = layout.total_size();
  if (checkpoint.weights.size() != weights || checkpoint.optimizer.buffers.size() + weights != expected) return;
  checkpoint.optimizer.buffers.insert(checkpoint.optimizer.buffers.end(), checkpoint.weights.begin(),
                                      checkpoint.weights.end());
}

}  // namespace

Result<std::optional<TrainingCheckpoint>> load_resume(const std::string& path, const PreparedRun& run,
                                                      const std::optional<ResumingModel>& model) {
  if (path.empty()) return std::optional<TrainingCheckpoint>{};
  auto checkpoint = read_checkpoint(path);
  if (!checkpoint) return Error{checkpoint.error()};
  if (auto same = same_seed_and_mode(path, *checkpoint, run.config); !same) return Error{same.error()};
  ResumingModel dense;
  if (!model) {
    dense.layout = &run.layout;
    dense.train_examples = run.data.train->count;
    if (!run.data.train_fingerprint.empty()) dense.train = run.data.train_fingerprint;
  }
  start_missing_averages(*checkpoint, run.job(), model ? *model->layout : run.layout);
  // Every field is checked here, before any of it reaches the server, a shard or a worker process.
  if (auto fits = check_resume(*checkpoint, run.job(), model ? *model : dense); !fits)
    return Error{fmt::format("{}: {}", path, fits.error())};
  return std::optional<TrainingCheckpoint>(std::move(checkpoint).value());
}

}  // namespace psgrad
