// Writes gnuplot's input as text; quoting keeps any file name or label a literal string.
#include "apps/plot_script.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "io/config.hpp"

namespace psgrad {

namespace {

// gnuplot's single-quoted strings have one escape: '' for a quote. Newlines would end the command.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "''";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out + "'";
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Columns of plot_data's rows.
constexpr int kWallColumn = 2, kSamplesColumn = 3, kAccuracyColumn = 4, kDevLossColumn = 5, kTrainLossColumn = 6;

std::string plot_command(const std::vector<PlotSeries>& series, int x_column, int y_column) {
  std::string command = "plot ";
  for (std::size_t i = 0; i < series.size(); ++i)
    command += fmt::format("{}{} using {}:{} with linespoints linetype {} linewidth 2 pointtype 7 pointsize 0.5 "
                           "title {}",
                           i ? ", \\\n     " : "", quoted(series[i].data_path), x_column, y_column, i + 1,
                           quoted(series[i].title));
  return command + "\n";
}

std::string panel(const std::vector<PlotSeries>& series, const PlotLayout& layout, const std::string& x_label,
                  int x_column, const std::string& y_label, int y_column, const std::string& y_range) {
  // Samples run into the hundred thousands: "50k" keeps the tick labels apart.
  const auto x_format = x_column == kSamplesColumn ? "%.0s%c" : "%g";
  // gnuplot would widen the axis to its next round tick, past the last point.
  const double x_end = x_column == kSamplesColumn ? layout.samples_end : layout.wall_end;
  const auto x_range = x_end > 0 ? fmt::format("[0:{}]", x_end) : std::string("[*:*]");
  return fmt::format("set xlabel {}\nset format x {}\nset xrange {}\nset ylabel {}\nset yrange {}\n",
                     quoted(x_label), quoted(x_format), x_range, quoted(y_label), y_range) +
         plot_command(series, x_column, y_column);
}

// Settings that differ between runs without changing what they learn.
bool is_incidental(const std::string& key) {
  return key == "training.checkpoint_path" || key == "cluster.host" || key == "cluster.port" ||
         key == "cluster.join_token" || key.rfind("cluster.tls_", 0) == 0;
}

// The settings the legend names already, whatever else it shows.
bool is_in_every_label(const std::string& key) {
  return key == "cluster.mode" || key == "training.seed" || key == "cluster.num_workers";
}

// The keys whose values are not the same in every run (a key some run lacks counts as differing).
std::vector<std::string> differing_settings(const std::vector<RunFacts>& runs) {
  std::map<std::string, int> present;
  for (const auto& run : runs)
    for (const auto& setting : run.settings) ++present[setting.first];
  std::vector<std::string> keys;
  for (const auto& [key, count] : present) {
    if (is_incidental(key) || is_in_every_label(key)) continue;
    bool differs = count != static_cast<int>(runs.size());
    for (const auto& run : runs)
      differs = differs || run.settings.at(key) != runs.front().settings.at(key);
    if (differs) keys.push_back(key);
  }
  return keys;
}

}  // namespace

Result<PlotFormat> plot_format_for(const std::string& output_path) {
  const auto extension = lower(std::filesystem::path(output_path).extension().string());
  if (extension == ".png") return PlotFormat::png;
  if (extension == ".svg") return PlotFormat::svg;
  if (extension == ".pdf") return PlotFormat::pdf;
  return Error{fmt::format("{}: unsupported output type \"{}\"; name the output .png, .svg or .pdf", output_path,
                           extension)};
}

std::string plot_data(const MetricsLog& log) {
  std::string text = "# iteration wall_seconds samples dev_accuracy dev_loss train_loss\n";
  for (const auto& eval : log.evals) {
    const auto train_loss = eval.samples > 0 ? fmt::format("{}", eval.train_loss) : std::string("?");
    text += fmt::format("{} {} {} {} {} {}\n", eval.iteration, eval.wall_seconds, eval.samples, eval.dev_accuracy,
                        eval.dev_loss, train_loss);
  }
  return text;
}

RunFacts run_facts(const MetricsLog& log) {
  RunFacts facts;
  facts.file = std::filesystem::path(log.path).filename().string();
  if (facts.file.size() > 6 && facts.file.compare(facts.file.size() - 6, 6, ".jsonl") == 0)
    facts.file.resize(facts.file.size() - 6);
  facts.mode = log.run.mode;
  facts.workers = log.run.num_workers;
  facts.processes = log.run.command != "train";  // "serve", "train --processes"
  if (auto config = parse_config(log.run.config, log.path)) facts.seed = config->training.seed;
  facts.data = log.run.data.substr(0, log.run.data.find(':'));
  facts.settings = config_settings(log.run.config);
  return facts;
}

std::map<std::string, std::string> config_settings(const std::string& rendered_config) {
  std::map<std::string, std::string> settings;
  std::string section, line;
  std::size_t start = 0;
  while (start < rendered_config.size()) {
    const auto end = std::min(rendered_config.find('\n', start), rendered_config.size());
    line = rendered_config.substr(start, end - start);
    start = end + 1;
    if (line.size() > 2 && line.front() == '[' && line.back() == ']') {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const auto equals = line.find(" = ");
    if (equals == std::string::npos || line.front() == '#') continue;
    auto key = line.substr(0, equals);
    if (key.size() > 1 && key.front() == '"' && key.back() == '"') key = key.substr(1, key.size() - 2);
    settings[section.empty() ? key : section + "." + key] = line.substr(equals + 3);
  }
  return settings;
}

std::vector<std::string> run_labels(const std::vector<RunFacts>& runs, bool by_file) {
  const bool any_processes = std::any_of(runs.begin(), runs.end(), [](const RunFacts& r) { return r.processes; });
  const auto differing = runs.size() > 1 ? differing_settings(runs) : std::vector<std::string>();
  std::vector<std::string> labels;
  for (const auto& run : runs) {
    if (by_file) {
      labels.push_back(run.file);
      continue;
    }
    auto label = run.mode;
    if (run.seed) label += fmt::format(", seed {}", *run.seed);
    label += fmt::format(", {} worker{}", run.workers, run.workers == 1 ? "" : "s");
    if (any_processes) label += run.processes ? ", processes" : ", one process";
    // Two runs that differ in a learning rate are told apart by it, not by their file names.
    for (const auto& key : differing) {
      const auto value = run.settings.find(key);
      label += fmt::format(", {}={}", key, value == run.settings.end() ? std::string("(unset)") : value->second);
    }
    labels.push_back(label);
  }
  std::map<std::string, int> uses;
  for (const auto& label : labels) ++uses[label];
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (uses[labels[i]] > 1) labels[i] += " (" + runs[i].file + ")";
  return labels;
}

std::string default_plot_title(const std::vector<RunFacts>& runs) {
  std::vector<std::string> names;
  for (const auto& run : runs)
    if (!run.data.empty() && std::find(names.begin(), names.end(), run.data) == names.end()) names.push_back(run.data);
  if (names.empty()) return "psgrad: learning curves";
  std::string listed = names.front();
  for (std::size_t k = 1; k < names.size(); ++k) listed += (k + 1 == names.size() ? " and " : ", ") + names[k];
  return fmt::format("psgrad on {}: learning curves", listed);
}

void fit_x_axes(PlotLayout& layout, const std::vector<MetricsLog>& logs) {
  for (const auto& log : logs)
    for (const auto& eval : log.evals) {
      layout.samples_end = std::max(layout.samples_end, static_cast<double>(eval.samples));
      layout.wall_end = std::max(layout.wall_end, eval.wall_seconds);
    }
}

Result<std::pair<double, double>> parse_ylim(const std::string& text) {
  const auto colon = text.find(':');
  auto bad = [&text] {
    return Error{fmt::format("--ylim \"{}\": expected LOW:HIGH with LOW < HIGH, e.g. 0.8:1", text.substr(0, 100))};
  };
  if (colon == std::string::npos) return bad();
  const auto low_text = text.substr(0, colon), high_text = text.substr(colon + 1);
  char* end = nullptr;
  const double low = std::strtod(low_text.c_str(), &end);
  if (low_text.empty() || *end != '\0') return bad();
  const double high = std::strtod(high_text.c_str(), &end);
  if (high_text.empty() || *end != '\0') return bad();
  if (!std::isfinite(low) || !std::isfinite(high) || !(low < high)) return bad();
  return std::make_pair(low, high);
}

std::string gnuplot_script(const std::vector<PlotSeries>& series, const PlotLayout& layout,
                           const std::string& output_path) {
  std::string script;
  // noenhanced: run names are full of underscores, which enhanced text would turn into subscripts.
  switch (layout.format) {
    case PlotFormat::png:
      script += "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                "  set terminal pngcairo size 1200,900 noenhanced\n"
                "} else {\n"
                "  set terminal png size 1200,900 noenhanced\n"
                "}\n";
      break;
    case PlotFormat::svg: script += "set terminal svg size 1200,900 noenhanced\n"; break;
    case PlotFormat::pdf: script += "set terminal pdfcairo size 11in,8.25in noenhanced\n"; break;
  }
  script += "set output " + quoted(output_path) + "\n";
  script += "set multiplot layout 2,2 title " + quoted(layout.title) + "\n";
  script += "set grid\nset key bottom right\nset datafile missing '?'\n"
            // Y ranges fitted to the data rather than widened to the next round tick, with a little
            // room so the extreme points do not sit on the frame.
            "set autoscale yfix\nset offsets 0, 0, graph 0.05, graph 0.05\n";
  const auto accuracy_range =
      layout.accuracy_range ? fmt::format("[{}:{}]", layout.accuracy_range->first, layout.accuracy_range->second)
                            : std::string("[*:*]");
  script += panel(series, layout, "training samples seen", kSamplesColumn, "dev accuracy", kAccuracyColumn,
                  accuracy_range);
  script += panel(series, layout, "wall time (s)", kWallColumn, "dev accuracy", kAccuracyColumn, accuracy_range);
  script += "set key top right\n";
  script += panel(series, layout, "training samples seen", kSamplesColumn, "dev loss", kDevLossColumn, "[*:*]");
  script += panel(series, layout, "training samples seen", kSamplesColumn,
                  "train loss (mean since the previous point)", kTrainLossColumn, "[*:*]");
  script += "unset multiplot\nset output\n";
  return script;
}

}  // namespace psgrad
