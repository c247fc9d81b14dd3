// `psgrad plot RUN.jsonl... -o curves.png|svg`: learning curves of metrics files, drawn by gnuplot.
#pragma once

#include <string>
#include <vector>

#include "apps/command.hpp"

namespace psgrad {

struct PlotOptions {
  std::vector<std::string> metrics_paths;
  std::string output_path = "curves.png";
  std::string label = "file";  // "file" or "mode": what names each line
};

Command add_plot_command(CLI::App& app);
int run_plot_command(const PlotOptions& options);

}  // namespace psgrad
