// Writes gnuplot's input as text; quoting keeps any file name or label a literal string.
#include "apps/plot_script.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

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

std::string plot_command(const std::vector<PlotSeries>& series, const char* x_column) {
  std::string command = "plot ";
  for (std::size_t i = 0; i < series.size(); ++i)
    command += fmt::format("{}{} using {}:3 with linespoints linetype {} linewidth 2 pointtype 7 pointsize 0.6 title {}", i ? ", \\\n     " : "",
                           quoted(series[i].data_path), x_column, i + 1, quoted(series[i].title));
  return command + "\n";
}

}  // namespace

Result<PlotFormat> plot_format_for(const std::string& output_path) {
  const auto extension = lower(std::filesystem::path(output_path).extension().string());
  if (extension == ".png") return PlotFormat::png;
  if (extension == ".svg") return PlotFormat::svg;
  return Error{fmt::format("{}: unsupported output type \"{}\"; name the output .png or .svg", output_path, extension)};
}

std::string plot_data(const MetricsLog& log) {
  std::string text = "# iteration wall_seconds dev_accuracy\n";
  for (const auto& eval : log.evals)
    text += fmt::format("{} {} {}\n", eval.iteration, eval.wall_seconds, eval.dev_accuracy);
  return text;
}

std::string run_label(const MetricsLog& log, bool by_mode) {
  if (by_mode)
    return fmt::format("{}{}{}, {} workers", log.run.command, log.run.command.empty() ? "" : " ", log.run.mode,
                       log.run.num_workers);
  auto name = std::filesystem::path(log.path).filename().string();
  if (name.size() > 6 && name.compare(name.size() - 6, 6, ".jsonl") == 0) name.resize(name.size() - 6);
  return name;
}

std::string gnuplot_script(const std::vector<PlotSeries>& series, PlotFormat format, const std::string& output_path) {
  std::string script;
  // noenhanced: run names are full of underscores, which enhanced text would turn into subscripts.
  if (format == PlotFormat::png)
    script += "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
              "  set terminal pngcairo size 1200,480 noenhanced\n"
              "} else {\n"
              "  set terminal png size 1200,480 noenhanced\n"
              "}\n";
  else
    script += "set terminal svg size 1200,480 noenhanced\n";
  script += "set output " + quoted(output_path) + "\n";
  script += "set multiplot layout 1,2 title 'psgrad: dev accuracy'\n"
            "set grid\n"
            "set key bottom right\n"
            "set ylabel 'dev accuracy'\n"
            "set yrange [0:1]\n";
  script += "set xlabel 'iteration'\n" + plot_command(series, "1");
  script += "set xlabel 'wall time (s)'\n" + plot_command(series, "2");
  script += "unset multiplot\nset output\n";
  return script;
}

}  // namespace psgrad
