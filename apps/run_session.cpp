// Opens a train or serve run in the order its errors and signals expect, and closes it with its exit code.
#include "apps/run_session.hpp"

#include <fmt/format.h>

namespace psgrad {

Status RunSession::open(const RunOptions& options, const std::string& resume_path) {
  options_ = options;
  auto prepared = prepare_run(options, resume_path);
  if (!prepared) return Error{prepared.error()};
  run_ = std::move(prepared).value();
  // The header comes first: a refused checkpoint then reads as this run's refusal.
  print_run_header(*run_);
  auto resume = load_resume(resume_path, *run_);
  if (!resume) return Error{resume.error()};
  resume_ = std::move(resume).value();
  if (resume_ && !resume_->data)
    run_->output->print_note(fmt::format("psgrad: note: {} was written before checkpoints recorded their training "
                                         "data, so the data it resumes on could not be checked",
                                         resume_path));
  return success();
}

ActorConfig RunSession::actor_config() const {
  return ActorConfig(static_cast<std::size_t>(run_->config.cluster.threads), network_settings(run_->config.cluster));
}

SnapshotCallback RunSession::snapshot_callback() const {
  return run_->best ? run_->best->callback() : SnapshotCallback{};
}

int RunSession::finish(const Result<TrainingSummary>& summary) const { return finish_run(summary, *run_, options_); }

}  // namespace psgrad
