#include "apps/report_printer.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "apps/run_output.hpp"

namespace psgrad {

ReportCallback print_reports() {
  // A run set up by prepare_run() prints (and records) through its output, honouring --quiet/--verbose.
  if (auto output = active_run_output()) return output->callback();
  return [](const EvaluationReport& report) {
    if (report.final) fmt::print("Final \taccuracy: {:.3f}\n", report.accuracy);
    else fmt::print("{}\taccuracy: {:.3f}\n", report.iteration, report.accuracy);
    std::fflush(stdout);
  };
}

std::string summary_line(const TrainingSummary& summary, std::size_t workers) {
  auto line = fmt::format("{} summary: workers {}, steps {}, final accuracy {:.3f}, wall {:.2f} s, "
                          "{:.0f} samples/s",
                          summary.mode, workers, summary.steps, summary.final_accuracy,
                          summary.wall_seconds,
                          summary.training_seconds > 0 ? summary.samples / summary.training_seconds : 0.0);
  if (summary.mode != "sync")
    line += fmt::format(", staleness min/mean/max {:.0f}/{:.2f}/{:.0f}", summary.staleness_min,
                        summary.staleness_mean, summary.staleness_max);
  return line;
}

}  // namespace psgrad
