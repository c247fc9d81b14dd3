// Reads the metrics files, writes data and script files to a temporary folder and runs gnuplot on them.
#include "apps/plot_command.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apps/plot_script.hpp"
#include "io/metrics_reader.hpp"

extern char** environ;

namespace psgrad {

namespace fs = std::filesystem;

namespace {

// A folder under the system temp directory, removed with its contents when done.
class TemporaryFolder {
 public:
  static Result<TemporaryFolder> create() {
    std::error_code error;
    auto pattern = (fs::temp_directory_path(error) / "psgrad-plot-XXXXXX").string();
    if (error || !::mkdtemp(pattern.data())) return Error{"cannot create a temporary folder"};
    return TemporaryFolder(pattern);
  }
  TemporaryFolder(TemporaryFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(TemporaryFolder&&) = delete;
  ~TemporaryFolder() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  fs::path file(const std::string& name) const { return path_ / name; }

 private:
  explicit TemporaryFolder(fs::path path) : path_(std::move(path)) {}
  fs::path path_;
};

std::optional<std::string> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string folders = path ? path : "";
  std::size_t start = 0;
  while (start <= folders.size()) {
    const auto end = std::min(folders.find(':', start), folders.size());
    const auto folder = folders.substr(start, end - start);
    const auto candidate = (fs::path(folder.empty() ? "." : folder) / program).string();
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

Status write_text(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  if (!file) return Error{fmt::format("{}: cannot write", path.string())};
  return success();
}

// The first line gnuplot printed, to explain a failure in one line.
std::string first_line_of(const fs::path& path) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return "no message";
}

Status run_gnuplot(const std::string& gnuplot, const fs::path& script, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string program = gnuplot, script_path = script.string();
  char* argv[] = {program.data(), script_path.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return Error{fmt::format("cannot run {}: {}", gnuplot, std::strerror(spawned))};
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return Error{fmt::format("lost track of {}", gnuplot)};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Error{fmt::format("gnuplot failed: {}", first_line_of(log))};
  return success();
}

Status plot(const PlotOptions& options) {
  auto format = plot_format_for(options.output_path);
  if (!format) return Error{format.error()};
  PlotLayout layout;
  layout.format = *format;
  if (!options.ylim.empty()) {
    auto range = parse_ylim(options.ylim);
    if (!range) return Error{range.error()};
    layout.accuracy_range = *range;
  }
  std::vector<MetricsLog> logs;
  for (const auto& path : options.metrics_paths) {
    auto log = read_metrics_log(path);
    if (!log) return Error{log.error()};
    if (log->evals.empty()) return Error{fmt::format("{}: no eval lines to plot", path)};
    if (log->cut_off_line)
      fmt::print(stderr, "psgrad plot: {}:{}: the last line is cut off (the run stopped while writing it); "
                         "plotting the lines before it\n", path, log->cut_off_line);
    logs.push_back(std::move(log).value());
  }
  const auto gnuplot = find_on_path("gnuplot");
  if (!gnuplot) return Error{"gnuplot not found; install gnuplot-nox"};

  auto folder = TemporaryFolder::create();
  if (!folder) return Error{folder.error()};
  std::vector<RunFacts> facts;
  for (const auto& log : logs) facts.push_back(run_facts(log));
  const auto labels = run_labels(facts, options.label == "file");
  layout.title = options.title.empty() ? default_plot_title(facts) : options.title;
  fit_x_axes(layout, logs);
  std::vector<PlotSeries> series;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto data_path = folder->file(fmt::format("run{}.dat", i));
    if (auto written = write_text(data_path, plot_data(logs[i])); !written) return written;
    series.push_back({data_path.string(), labels[i]});
  }
  std::error_code ignored;
  const auto output = fs::absolute(options.output_path, ignored).string();
  const auto script = folder->file("curves.gp");
  if (auto written = write_text(script, gnuplot_script(series, layout, output)); !written) return written;
  if (auto ran = run_gnuplot(*gnuplot, script, folder->file("gnuplot.log")); !ran) return ran;
  if (!fs::exists(output, ignored) || fs::file_size(output, ignored) == 0)
    return Error{fmt::format("{}: gnuplot wrote no image", options.output_path)};
  fmt::print("psgrad plot: wrote {} ({} run{})\n", options.output_path, logs.size(), logs.size() == 1 ? "" : "s");
  return success();
}

}  // namespace

Command add_plot_command(CLI::App& app) {
  auto options = std::make_shared<PlotOptions>();
  auto* command = app.add_subcommand(
      "plot", "Draw dev accuracy, dev loss and train loss against samples seen and wall time (needs gnuplot)");
  command->add_option("metrics", options->metrics_paths, "metrics files (.jsonl) written by train or serve")
      ->required();
  command->add_option("-o,--output", options->output_path, "image to write: .png, .svg or .pdf (default curves.png)");
  command
      ->add_option("--label", options->label,
                   "name each line by its run (mode, seed, workers, processes and any other setting the runs "
                   "differ in; the default) or its file")
      ->check(CLI::IsMember({"run", "file", "mode"}));  // "mode": the earlier name of "run"
  command->add_option("--title", options->title, "the figure's title (default: psgrad on <data set>: learning curves)");
  command->add_option("--ylim", options->ylim, "accuracy axis range LOW:HIGH (default: fitted to the data)");
  return {command, [options] { return run_plot_command(*options); }};
}

int run_plot_command(const PlotOptions& options) {
  auto plotted = plot(options);
  if (!plotted) {
    fmt::print(stderr, "psgrad plot: {}\n", plotted.error());
    return plotted.error().rfind("gnuplot failed", 0) == 0 ? 1 : 2;
  }
  return 0;
}

}  // namespace psgrad
