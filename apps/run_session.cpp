// Opens a train or serve run in the order its errors and signals expect, and closes it with its exit code.
#include "apps/run_session.hpp"

#include <fmt/format.h>
#include "apps/local_run.hpp"
#include "apps/tables_run.hpp"

namespace psgrad {

Status RunSession::open(const RunOptions& options, const std::string& resume_path) {
  options_ = options;
  auto prepared = prepare_run(options, resume_path);
  if (!prepared) return Error{prepared.error()};
  run_ = std::move(prepared).value();
  // The checkpoint before the header: a refused one is the command's one line.
  auto resume = load_resume(resume_path, *run_,
                            run_->tables ? std::optional<ResumingModel>(resuming_model_of(*run_)) : std::nullopt);
  if (!resume) return Error{resume.error()};
  resume_ = std::move(resume).value();
  print_run_header(*run_);
  if (resume_ && !resume_->data)
    run_->output->print_note(fmt::format("psgrad: note: {} was written before checkpoints recorded their training "
                                         "data, so the data it resumes on could not be checked",
                                         resume_path));
  return success();
}

ActorConfig RunSession::actor_config() const { return run_actor_config(*run_); }

int RunSession::finish(const Result<TrainingSummary>& summary, const ModelSaver& save) const {
  return finish_run(summary, *run_, options_, save);
}

}  // namespace psgrad
