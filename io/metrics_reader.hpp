// Reads a metrics file back, refusing files that are not psgrad metrics.
#pragma once

#include <string>

#include "io/metrics_records.hpp"
#include "model/result.hpp"

namespace psgrad {

// Errors are one line naming the file (and the line, when one line is at fault). An unfinished last
// line, as a crash can leave, is skipped and its number recorded in cut_off_line.
Result<MetricsLog> read_metrics_log(const std::string& path);

}  // namespace psgrad
