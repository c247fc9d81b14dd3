// The gnuplot script and data files `psgrad plot` feeds gnuplot: dev accuracy by iteration and by wall time.
#pragma once

#include <string>
#include <vector>

#include "io/metrics_records.hpp"
#include "model/result.hpp"

namespace psgrad {

enum class PlotFormat { png, svg };

// From the output's extension (.png or .svg, any case).
Result<PlotFormat> plot_format_for(const std::string& output_path);

// One row per evaluation: "iteration wall_seconds dev_accuracy".
std::string plot_data(const MetricsLog& log);

// The file's name without .jsonl, or (by_mode) "train sync, 2 workers".
std::string run_label(const MetricsLog& log, bool by_mode);

struct PlotSeries {
  std::string data_path;
  std::string title;
};

// Two panels side by side via multiplot, one line per series in each.
std::string gnuplot_script(const std::vector<PlotSeries>& series, PlotFormat format, const std::string& output_path);

}  // namespace psgrad
