// Prints and records each evaluation report according to the verbosity, terminal and metrics settings.
#include "apps/run_output.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "apps/metrics_from_run.hpp"

namespace psgrad {

RunOutput::RunOutput(OutputSettings settings, bool shows_staleness, std::unique_ptr<MetricsWriter> metrics)
    : settings_(settings), shows_staleness_(shows_staleness), metrics_(std::move(metrics)) {}

void RunOutput::print_line(const std::string& line) {
  if (quiet()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  progress_.clear();
  write_stdout(line + "\n");
}

void RunOutput::write_stdout(const std::string& text) {
  if (stdout_closed_) return;
  if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0) return;
  stdout_closed_ = true;
  std::clearerr(stdout);
  fmt::print(stderr, "psgrad: warning: standard output is closed; the run goes on and saves as set, but prints "
                     "nothing more there\n");
  std::fflush(stderr);
}

void RunOutput::print_note(const std::string& line) {
  if (quiet()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  progress_.clear();
  fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

std::function<void(const std::string&)> RunOutput::event_printer(std::string prefix) {
  return [self = shared_from_this(), prefix = std::move(prefix)](const std::string& line) {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->progress_.clear();
    fmt::print(stderr, "{}: {}\n", prefix, line);
    std::fflush(stderr);
  };
}

void RunOutput::report(const EvaluationReport& report) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    progress_.clear();  // the stdout line must not land behind the progress text on the terminal
    const auto label = report.final ? std::string("Final ") : std::to_string(report.iteration);
    if (settings_.verbosity != Verbosity::silent && (!quiet() || report.final)) {
      write_stdout(fmt::format("{}\taccuracy: {:.3f}\n", label, report.accuracy));
    }
    if (settings_.verbosity == Verbosity::verbose) {
      fmt::print(stderr, "{}\tdev loss: {:.4f}\ttrain loss: {:.4f}\n", label, report.loss,
                 report.progress.train_loss);
      std::fflush(stderr);
    }
    if (settings_.progress_line && !quiet() && !report.final) progress_.show(progress_text(report, shows_staleness_, terminal_width()));
    // Like the metrics file, a full disk stops the event file after one warning, not the run.
    if (tensorboard_ && !tensorboard_failed_) {
      if (auto written = tensorboard_->report(report); !written) {
        tensorboard_failed_ = true;
        progress_.clear();
        fmt::print(stderr, "psgrad: warning: {}; later TensorBoard events are lost\n", written.error());
        std::fflush(stderr);
      }
    }
  }
  if (metrics_ && !metrics_failed_) record(metrics_->write(metrics_eval(report)));
}

ReportCallback RunOutput::callback() {
  return [self = shared_from_this()](const EvaluationReport& report) { self->report(report); };
}

void RunOutput::finish(const TrainingSummary& summary) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    progress_.clear();
  }
  if (metrics_ && !metrics_failed_) record(metrics_->write(metrics_summary(summary)));
  if (const auto failed = failed_checkpoints_.load(); failed > 1)
    fmt::print(stderr, "psgrad: {} checkpoints could not be written (the first failure is said above)\n", failed);
}

void RunOutput::interrupted(const std::string& signal, std::uint64_t steps, const std::string& checkpoint) {
  if (metrics_ && !metrics_failed_) record(metrics_->write_interruption(signal, steps, checkpoint));
}

void RunOutput::fail(const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    progress_.clear();
  }
  if (metrics_ && !metrics_failed_) record(metrics_->write_failure(error));
}

bool RunOutput::record_checkpoint(const Status& written, std::uint64_t iteration) {
  last_checkpoint_failed_ = !written.ok();
  if (written) {
    last_checkpoint_iteration_ = static_cast<std::int64_t>(iteration);
    return false;
  }
  return failed_checkpoints_++ == 0;
}

std::optional<std::uint64_t> RunOutput::last_checkpoint_written() const {
  const auto iteration = last_checkpoint_iteration_.load();
  if (iteration < 0) return std::nullopt;
  return static_cast<std::uint64_t>(iteration);
}

void RunOutput::record(const Status& written) {
  if (written) return;
  if (metrics_failed_.exchange(true)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  progress_.clear();
  fmt::print(stderr, "psgrad: warning: {}; later metrics lines are lost\n", written.error());
  std::fflush(stderr);
}

}  // namespace psgrad
