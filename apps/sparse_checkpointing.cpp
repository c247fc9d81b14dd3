// Writes sparse checkpoints with the run's rendered config and reads one back to resume from.
#include "apps/sparse_checkpointing.hpp"


#include <fmt/format.h>

#include "actors/sparse_resume.hpp"
#include "apps/checkpointing.hpp"
#include "io/sparse_checkpoint_file.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

std::uint64_t table_floats(const SparseModel& model) {
  std::uint64_t floats = 0;
  for (const auto& field : model.fields()) floats += field.rows * field.width;
  return floats;
}

std::function<void(const SparseCheckpoint&)> sparse_checkpoint_writer(const PreparedRun& run,
                                                                      std::uint64_t table_floats,
                                                                      std::shared_ptr<const std::atomic<int>> interrupt) {
  const CheckpointDestination destination(run, std::move(interrupt));
  if (!destination.any()) return {};
  return [destination, table_floats](const SparseCheckpoint& checkpoint) {
    const auto path = destination.path();
    if (!path) return;
    const auto size = table_state_size(checkpoint);
    const double share = table_floats > 0 ? 100.0 * static_cast<double>(size.row_floats) / table_floats : 0.0;
    destination.report(write_sparse_checkpoint(*path, checkpoint), checkpoint.dense.iteration, *path,
                       fmt::format(" ({} touched table rows, {:.1f}% of the tables' nV x width)", size.rows, share));
  };
}

Result<std::optional<SparseCheckpoint>> load_sparse_resume(const std::string& path, const PreparedRun& run,
                                                           const SparseModel& model, const SparseDataset& train) {
  if (path.empty()) return std::optional<SparseCheckpoint>{};
  auto checkpoint = read_sparse_checkpoint(path);
  if (!checkpoint) return Error{checkpoint.error()};
  if (auto same = same_seed_and_mode(path, checkpoint->dense, run.config); !same) return Error{same.error()};
  auto row_optimizer = build_row_optimizer(table_optimizer_choice(run.config.tables), run.config.optimizer, 1);
  if (!row_optimizer) return Error{row_optimizer.error()};
  if (auto fits = check_sparse_resume(*checkpoint, run.job(), model, train, (*row_optimizer)->name()); !fits)
    return Error{fmt::format("{}: {}", path, fits.error())};
  return std::optional<SparseCheckpoint>(std::move(checkpoint).value());
}

}  // namespace psgrad
