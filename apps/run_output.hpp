// Where a run's progress goes: tutorial lines on stdout, progress line and losses on stderr, metrics file.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "actors/evaluator.hpp"
#include "payloads/messages.hpp"
#include "apps/progress_line.hpp"
#include "apps/tensorboard_output.hpp"
#include "io/metrics_writer.hpp"

namespace psgrad {

// silent: nothing on stdout at all, for a caller that shows the run itself (the Python module).
enum class Verbosity { silent, quiet, normal, verbose };

struct OutputSettings {
  Verbosity verbosity = Verbosity::normal;
  bool progress_line = false;  // only on a terminal
};

class RunOutput : public std::enable_shared_from_this<RunOutput> {
 public:
  // metrics may be null: no metrics file.
  RunOutput(OutputSettings settings, bool shows_staleness, std::unique_ptr<MetricsWriter> metrics);

  bool quiet() const { return settings_.verbosity <= Verbosity::quiet; }
  bool interactive() const { return settings_.progress_line; }
  const MetricsWriter* metrics() const { return metrics_.get(); }
  // --tensorboard: each report also goes to this event file. Call before the run starts.
  void add_tensorboard(std::unique_ptr<TensorBoardOutput> events) { tensorboard_ = std::move(events); }
  const TensorBoardOutput* tensorboard() const { return tensorboard_.get(); }
  // Where a run without training.checkpoint_path saves itself when a signal stops it: a name of this
  // run's own, so that no interrupted run overwrites another's checkpoint. Chosen once, at the start.
  void name_interrupted_checkpoint(std::string path) { interrupted_checkpoint_ = std::move(path); }
  const std::string& interrupted_checkpoint() const { return interrupted_checkpoint_; }

  // A line for stdout that --quiet drops.
  void print_line(const std::string& line);
  // A line for stderr that --quiet drops, printed so it does not tangle with the progress line.
  void print_note(const std::string& line);
  // For the driver's and server's event lines ("worker 1 joined"): "<prefix>: <line>" on stderr, even
  // with --quiet as today, but without tangling with the progress line.
  std::function<void(const std::string&)> event_printer(std::string prefix);
  // The tutorial's accuracy lines, --verbose losses, the progress line and the metrics "eval" line.
  void report(const EvaluationReport& report);
  // The evaluator calls this from its own thread; the callback keeps this output alive.
  ReportCallback callback();
  void finish(const TrainingSummary& summary);
  // Before finish(), for a run a signal stopped early.
  void interrupted(const std::string& signal, std::uint64_t steps, const std::string& checkpoint);
  void fail(const std::string& error);
  // Remembers whether the latest checkpoint write failed: an earlier one a later write replaced is
  // no loss, the final one is. True for the run's first failed write: that one is said in full, later
  // ones are counted and finish() says how many.
  bool record_checkpoint(const Status& written, std::uint64_t iteration);
  // The iteration of the last checkpoint written, if one was: a failed run says where to resume.
  std::optional<std::uint64_t> last_checkpoint_written() const;
  // Whether a file the run writes as it goes lost part of its contents: a metrics line, or the final
  // checkpoint. Such a run must not exit 0.
  bool lost_output() const { return metrics_failed_ || tensorboard_failed_ || last_checkpoint_failed_; }

 private:
  // Warns once, then stops recording: a full disk should not end a training run.
  void record(const Status& written);
  // Writes to stdout until a write fails (its reader went away, as `| head` does): then warns once and
  // writes there no more, while training and saving go on. Call under mutex_.
  void write_stdout(const std::string& text);

  OutputSettings settings_;
  bool shows_staleness_;  // async and ssp runs: gradients computed on older weights
  std::unique_ptr<MetricsWriter> metrics_;
  std::unique_ptr<TensorBoardOutput> tensorboard_;
  std::string interrupted_checkpoint_;  // written under mutex_
  ProgressLine progress_{stderr};
  std::mutex mutex_;
  bool stdout_closed_ = false;  // under mutex_
  std::atomic<bool> metrics_failed_{false};
  std::atomic<bool> tensorboard_failed_{false};
  std::atomic<bool> last_checkpoint_failed_{false};
  std::atomic<std::uint64_t> failed_checkpoints_{0};
  std::atomic<std::int64_t> last_checkpoint_iteration_{-1};  // -1: none written
};

}  // namespace psgrad
