// Serialises metrics records with nlohmann-json, one object per line.
#include "io/metrics_writer.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace psgrad {

namespace {

// A config or path with stray bytes must not make dump() throw: such bytes become U+FFFD.
constexpr auto kReplaceBadUtf8 = nlohmann::ordered_json::error_handler_t::replace;

std::tm utc_parts(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  return parts;
}

std::string compact_utc(std::chrono::system_clock::time_point time) {
  const auto t = utc_parts(time);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                     t.tm_min, t.tm_sec);
}

// Appended after a record's other fields: readers of the earlier fields (bench/straggler.sh) keep working.
void add_workers(nlohmann::ordered_json& line, const MetricsWorkers& workers) {
  line["dropped_per_worker"] = workers.dropped_per_worker;
  line["compute_ms_mean_per_worker"] = workers.compute_ms_mean_per_worker;
  line["wait_ms_mean_per_worker"] = workers.wait_ms_mean_per_worker;
  line["staleness_histogram"] = workers.staleness_histogram;
}

}  // namespace

std::string utc_iso8601(std::chrono::system_clock::time_point time) {
  const auto t = utc_parts(time);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                     t.tm_min, t.tm_sec);
}

Result<std::unique_ptr<MetricsWriter>> MetricsWriter::create(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return Error{fmt::format("{}: cannot create metrics file: {}", path, std::strerror(errno))};
  return std::make_unique<MetricsWriter>(Key{}, path, file);
}

Result<std::unique_ptr<MetricsWriter>> MetricsWriter::create_in(const std::string& folder, const std::string& mode,
                                                                std::chrono::system_clock::time_point now) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return Error{fmt::format("{}: cannot create the metrics folder: {}", folder, error.message())};
  const auto stem = (std::filesystem::path(folder) / (compact_utc(now) + "-" + mode)).string();
  for (int attempt = 1; attempt <= 1000; ++attempt) {
    const auto path = attempt == 1 ? stem + ".jsonl" : fmt::format("{}-{}.jsonl", stem, attempt);
    // "x": fail rather than overwrite, so runs started together each get their own file.
    if (std::FILE* file = std::fopen(path.c_str(), "wx"))
      return std::make_unique<MetricsWriter>(Key{}, path, file);
    if (errno != EEXIST) return Error{fmt::format("{}: cannot create metrics file: {}", path, std::strerror(errno))};
  }
  return Error{fmt::format("{}: cannot find a free metrics file name", stem)};
}

Status MetricsWriter::write_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (std::fputs(line.c_str(), file_.get()) < 0 || std::fputc('\n', file_.get()) == EOF ||
      std::fflush(file_.get()) != 0)
    return Error{fmt::format("{}: writing metrics failed: {}", path_, std::strerror(errno))};
  return success();
}

Status MetricsWriter::write(const MetricsRun& run) {
  return write_line(nlohmann::ordered_json{{"type", "run"},
                                   {"format", metrics_format},
                                   {"command", run.command},
                                   {"mode", run.mode},
                                   {"num_workers", run.num_workers},
                                   {"iterations", run.iterations},
                                   {"config_hash", run.config_hash},
                                   {"data", run.data},
                                   {"start_time", run.start_time},
                                   {"config", run.config}}
                        .dump(-1, ' ', false, kReplaceBadUtf8));
}

Status MetricsWriter::write(const MetricsEval& eval) {
  auto line = nlohmann::ordered_json{{"type", "eval"},
                                   {"iteration", eval.iteration},
                                   {"version", eval.version},
                                   {"wall_seconds", eval.wall_seconds},
                                   {"samples", eval.samples},
                                   {"dev_accuracy", eval.dev_accuracy},
                                   {"dev_loss", eval.dev_loss},
                                   {"train_loss", eval.train_loss},
                                   {"staleness_mean", eval.staleness_mean},
                                   {"staleness_max", eval.staleness_max},
                                   {"gradients_per_worker", eval.gradients_per_worker},
                                   {"final", eval.final}};
  add_workers(line, eval.workers);
  return write_line(line.dump(-1, ' ', false, kReplaceBadUtf8));
}

Status MetricsWriter::write(const MetricsSummary& summary) {
  auto line = nlohmann::ordered_json{{"type", "summary"},
                                   {"mode", summary.mode},
                                   {"steps", summary.steps},
                                   {"samples", summary.samples},
                                   {"final_accuracy", summary.final_accuracy},
                                   {"wall_seconds", summary.wall_seconds},
                                   {"training_seconds", summary.training_seconds},
                                   {"samples_per_second", summary.samples_per_second},
                                   {"staleness_min", summary.staleness_min},
                                   {"staleness_mean", summary.staleness_mean},
                                   {"staleness_max", summary.staleness_max},
                                   {"gradients_per_worker", summary.gradients_per_worker},
                                   {"final_version", summary.final_version},
                                   {"weights_hash", summary.weights_hash}};
  add_workers(line, summary.workers);
  return write_line(line.dump(-1, ' ', false, kReplaceBadUtf8));
}

Status MetricsWriter::write_interruption(const std::string& signal, std::uint64_t steps,
                                         const std::string& checkpoint) {
  return write_line(nlohmann::ordered_json{{"type", "interrupted"}, {"signal", signal}, {"steps", steps},
                                           {"checkpoint", checkpoint}}
                        .dump(-1, ' ', false, kReplaceBadUtf8));
}

Status MetricsWriter::write_failure(const std::string& error) {
  return write_line(nlohmann::ordered_json{{"type", "failed"}, {"error", error}}.dump(-1, ' ', false, kReplaceBadUtf8));
}

}  // namespace psgrad
