// `psgrad plot RUN.jsonl... -o curves.png|svg`: learning curves of metrics files, drawn by gnuplot.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace psgrad {

struct PlotOptions {
  std::vector<std::string> metrics_paths;
  std::string output_path = "curves.png";
  std::string label = "file";  // "file" or "mode": what names each line
};

CLI::App* add_plot_command(CLI::App& app, PlotOptions& options);
int run_plot_command(const PlotOptions& options);

}  // namespace psgrad
