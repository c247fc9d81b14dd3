// Formats the progress line and rewrites it with "\r" and the erase-to-end-of-line escape.
#include "apps/progress_line.hpp"

#include <cmath>

#include <fmt/format.h>
#include <unistd.h>

namespace psgrad {

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
}

std::string progress_text(const EvaluationReport& report, bool shows_staleness) {
  const auto& progress = report.progress;
  const auto total = progress.total_iterations;
  const double done = total ? static_cast<double>(progress.iteration) / static_cast<double>(total) : 0.0;
  const double rate = progress.wall_seconds > 0 ? static_cast<double>(progress.samples) / progress.wall_seconds : 0.0;
  // The time per iteration so far predicts the rest; before the first step there is nothing to go on.
  const double eta = progress.iteration > 0 && progress.iteration <= total
                         ? progress.wall_seconds * static_cast<double>(total - progress.iteration) /
                               static_cast<double>(progress.iteration)
                         : -1.0;
  auto text = fmt::format("iteration {}/{} ({:.0f}%) | {:.0f} samples/s | dev acc {:.3f} | ETA {}",
                          progress.iteration, total, 100.0 * done, rate, report.accuracy, duration_text(eta));
  if (shows_staleness)
    text += fmt::format(" | staleness {:.1f} mean, {:.0f} max", progress.staleness_mean, progress.staleness_max);
  return text;
}

void ProgressLine::show(const std::string& text) {
  fmt::print(terminal_, "\r{}\033[K", text);
  std::fflush(terminal_);
  shown_ = true;
}

void ProgressLine::clear() {
  if (!shown_) return;
  fmt::print(terminal_, "\r\033[K");
  std::fflush(terminal_);
  shown_ = false;
}

bool output_is_terminal() { return ::isatty(STDOUT_FILENO) == 1 && ::isatty(STDERR_FILENO) == 1; }

}  // namespace psgrad
