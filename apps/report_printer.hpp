// Prints the tutorial's lines ("{i}\taccuracy: {acc:.3f}", "Final \taccuracy: {acc:.3f}") and summaries.
#pragma once

#include <string>

#include "actors/evaluator.hpp"
#include "actors/messages.hpp"

namespace psgrad {

// The active run's output (see run_output.hpp) when print_run_header() set one, else plain printing.
ReportCallback print_reports();
std::string summary_line(const TrainingSummary& summary, std::size_t workers);

}  // namespace psgrad
