// Formats the progress line and rewrites it with "\r" and the erase-to-end-of-line escape.
#include "apps/progress_line.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include <sys/ioctl.h>

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

std::string progress_text(const EvaluationReport& report, bool shows_staleness, std::size_t width) {
  const auto& progress = report.progress;
  const auto total = progress.total_iterations;
  const double done = total ? static_cast<double>(progress.iteration) / static_cast<double>(total) : 0.0;
  const double rate = progress.wall_seconds > 0 ? static_cast<double>(progress.samples) / progress.wall_seconds : 0.0;
  // The time per iteration so far predicts the rest; before the first step there is nothing to go on.
  const double eta = progress.iteration > 0 && progress.iteration <= total
                         ? progress.wall_seconds * static_cast<double>(total - progress.iteration) /
                               static_cast<double>(progress.iteration)
                         : -1.0;
  // In display order, each with its rank: the lowest rank is dropped first when the line is too long.
  struct Part {
    std::string text;
    int rank;
  };
  std::vector<Part> parts = {
      {fmt::format("{} {}/{} ({:.0f}%)", shows_staleness ? "gradients" : "iteration", progress.iteration, total,
                   100.0 * done),
       5},
      {fmt::format("{:.0f} samples/s", rate), 2},
      {fmt::format("dev acc {:.3f}", report.accuracy), 4},
      {fmt::format("ETA {}", duration_text(eta)), 3},
  };
  if (shows_staleness)
    parts.push_back({fmt::format("staleness {:.1f} mean, {:.0f} max", progress.staleness_mean, progress.staleness_max), 1});
  const std::size_t room = width > 1 ? width - 1 : 0;
  auto joined = [&parts] {
    std::string text;
    for (const auto& part : parts) text += (text.empty() ? "" : " | ") + part.text;
    return text;
  };
  auto text = joined();
  while (text.size() > room && parts.size() > 1) {
    parts.erase(std::min_element(parts.begin(), parts.end(),
                                 [](const Part& a, const Part& b) { return a.rank < b.rank; }));
    text = joined();
  }
  if (text.size() > room) text.resize(room);
  return text;
}

std::size_t terminal_width() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const long parsed = std::strtol(columns, nullptr, 10);
    if (parsed > 0 && parsed < 100000) return static_cast<std::size_t>(parsed);
  }
  return 80;
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
