// Serialises metrics records with nlohmann-json, one object per line.
#include "io/metrics_writer.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/metrics_fields.hpp"
#include "io/output_path.hpp"

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

}  // namespace

std::string compact_utc(std::chrono::system_clock::time_point time) {
  const auto t = utc_parts(time);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                     t.tm_min, t.tm_sec);
}

namespace {

// A line of `type` with the record's fields after it, in their order.
template <class Fields>
std::string line_of(const char* type, const Fields& fields, const char* format = nullptr) {
  nlohmann::ordered_json line;
  line["type"] = type;
  if (format) line["format"] = format;
  for_each_field(fields, [&](const auto& field) { line[field.key] = field.member; });
  return line.dump(-1, ' ', false, kReplaceBadUtf8);
}

}  // namespace

std::string utc_iso8601(std::chrono::system_clock::time_point time) {
  const auto t = utc_parts(time);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                     t.tm_min, t.tm_sec);
}

Result<std::unique_ptr<MetricsWriter>> MetricsWriter::create(const std::string& path) {
  // Opening a FIFO for writing would wait for a reader; a device would take the lines.
  if (auto replaceable = check_replaceable(path, "metrics file"); !replaceable) return Error{replaceable.error()};
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
  return write_line(line_of("run", run_fields(run), metrics_format));
}

Status MetricsWriter::write(const MetricsEval& eval) { return write_line(line_of("eval", eval_fields(eval))); }

Status MetricsWriter::write(const MetricsSummary& summary) {
  return write_line(line_of("summary", summary_fields(summary)));
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
