// `psgrad plot RUN.jsonl... -o curves.png|svg|pdf`: learning curves of metrics files, drawn by gnuplot.
#pragma once

#include <string>
#include <vector>

#include "apps/command.hpp"

namespace psgrad {

struct PlotOptions {
  std::vector<std::string> metrics_paths;
  std::string output_path = "curves.png";
  std::string label = "run";  // "run" (mode, seed, workers, processes) or "file": what names each line
  std::string title;  // empty: "psgrad on <data set>: learning curves"
  std::string ylim;  // "LOW:HIGH" for the accuracy panels; empty: fitted to the data
};

Command add_plot_command(CLI::App& app);
int run_plot_command(const PlotOptions& options);

}  // namespace psgrad
