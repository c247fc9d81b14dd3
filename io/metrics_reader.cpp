// Parses the JSON lines of a metrics file into records with nlohmann-json.
#include "io/metrics_reader.hpp"

#include <sstream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/bounded_file.hpp"

namespace psgrad {

namespace {

using nlohmann::json;

// A run evaluating every iteration writes about 400 bytes per line: 256 MiB is over 600,000 lines.
constexpr std::uint64_t kMaxMetricsBytes = std::uint64_t{256} << 20;

// NaN and infinities are written as null; read them back as NaN rather than refusing the file.
double number(const json& line, const char* key) {
  const auto& value = line.at(key);
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  return value.get<double>();
}

MetricsRun run_from(const json& line) {
  MetricsRun run;
  run.command = line.value("command", "");
  run.mode = line.at("mode").get<std::string>();
  run.num_workers = line.at("num_workers").get<std::uint64_t>();
  run.iterations = line.at("iterations").get<std::uint64_t>();
  run.config_hash = line.at("config_hash").get<std::string>();
  run.config = line.at("config").get<std::string>();
  run.data = line.value("data", "");
  run.start_time = line.at("start_time").get<std::string>();
  return run;
}

// Files from before these fields read as empty lists.
MetricsWorkers workers_from(const json& line) {
  MetricsWorkers workers;
  workers.dropped_per_worker = line.value("dropped_per_worker", std::vector<std::uint64_t>{});
  workers.compute_ms_mean_per_worker = line.value("compute_ms_mean_per_worker", std::vector<double>{});
  workers.wait_ms_mean_per_worker = line.value("wait_ms_mean_per_worker", std::vector<double>{});
  workers.staleness_histogram = line.value("staleness_histogram", std::vector<std::uint64_t>{});
  return workers;
}

MetricsEval eval_from(const json& line) {
  MetricsEval eval;
  eval.iteration = line.at("iteration").get<std::uint64_t>();
  eval.version = line.at("version").get<std::uint64_t>();
  eval.wall_seconds = number(line, "wall_seconds");
  eval.samples = line.at("samples").get<std::uint64_t>();
  eval.dev_accuracy = number(line, "dev_accuracy");
  eval.dev_loss = number(line, "dev_loss");
  eval.train_loss = number(line, "train_loss");
  eval.staleness_mean = number(line, "staleness_mean");
  eval.staleness_max = number(line, "staleness_max");
  eval.gradients_per_worker = line.at("gradients_per_worker").get<std::vector<std::uint64_t>>();
  eval.final = line.at("final").get<bool>();
  eval.workers = workers_from(line);
  return eval;
}

MetricsSummary summary_from(const json& line) {
  MetricsSummary summary;
  summary.mode = line.at("mode").get<std::string>();
  summary.steps = line.at("steps").get<std::uint64_t>();
  summary.samples = line.at("samples").get<std::uint64_t>();
  summary.final_accuracy = number(line, "final_accuracy");
  summary.wall_seconds = number(line, "wall_seconds");
  summary.training_seconds = number(line, "training_seconds");
  summary.samples_per_second = number(line, "samples_per_second");
  summary.staleness_min = number(line, "staleness_min");
  summary.staleness_mean = number(line, "staleness_mean");
  summary.staleness_max = number(line, "staleness_max");
  summary.gradients_per_worker = line.at("gradients_per_worker").get<std::vector<std::uint64_t>>();
  summary.final_version = line.at("final_version").get<std::uint64_t>();
  summary.weights_hash = line.at("weights_hash").get<std::string>();
  summary.workers = workers_from(line);
  return summary;
}

bool is_run_line(const json& line) {
  return line.is_object() && line.value("type", "") == "run" && line.value("format", "") == metrics_format;
}

}  // namespace

Result<MetricsLog> read_metrics_log(const std::string& path) {
  auto contents = read_checked_file(path, "metrics file", kMaxMetricsBytes);
  if (!contents) return Error{contents.error()};
  std::istringstream file(std::move(*contents));
  const auto not_metrics = Error{fmt::format("{}: not a psgrad metrics file (its first line is not a {} run "
                                             "record)", path, metrics_format)};
  MetricsLog log;
  log.path = path;
  std::string text;
  std::size_t number_of_line = 0;
  while (std::getline(file, text)) {
    ++number_of_line;
    const bool unfinished = file.eof();  // no newline after it: the writer stopped mid-line
    const auto line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (line.is_discarded() || !line.is_object()) {
      if (number_of_line == 1) return not_metrics;
      if (unfinished) {
        log.cut_off_line = number_of_line;
        break;
      }
      return Error{fmt::format("{}:{}: not a JSON object", path, number_of_line)};
    }
    if (number_of_line == 1 && !is_run_line(line)) return not_metrics;
    try {
      const auto type = line.at("type").get<std::string>();
      if (type == "run") {
        if (number_of_line != 1) return Error{fmt::format("{}:{}: a second run record", path, number_of_line)};
        log.run = run_from(line);
      } else if (type == "eval") {
        log.evals.push_back(eval_from(line));
      } else if (type == "summary") {
        log.summary = summary_from(line);
      } else if (type == "failed") {
        log.failure = line.value("error", "");
      }  // other types: written by a newer psgrad; skipped so old readers still plot new files
    } catch (const json::exception& error) {
      return Error{fmt::format("{}:{}: malformed record: {}", path, number_of_line, error.what())};
    }
  }
  if (number_of_line == 0) return not_metrics;
  return log;
}

}  // namespace psgrad
