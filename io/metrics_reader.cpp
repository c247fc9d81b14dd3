// Parses the JSON lines of a metrics file into records with nlohmann-json.
#include "io/metrics_reader.hpp"

#include <sstream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/bounded_file.hpp"
#include "io/metrics_fields.hpp"

namespace psgrad {

namespace {

using nlohmann::json;

// A run evaluating every iteration writes about 400 bytes per line: 256 MiB is over 600,000 lines.
constexpr std::uint64_t kMaxMetricsBytes = std::uint64_t{256} << 20;

// NaN and infinities are written as null; read them back as NaN rather than refusing the file.
void read_value(const json& value, double& member) {
  member = value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>();
}

template <class Member>
void read_value(const json& value, Member& member) {
  member = value.get<Member>();
}

// A key added later may be missing (a file from before it): its member keeps its default.
template <class Fields>
void read_fields(const json& line, const Fields& fields) {
  for_each_field(fields, [&](const auto& field) {
    if (field.added_later && !line.contains(field.key)) return;
    read_value(line.at(field.key), field.member);
  });
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
        read_fields(line, run_fields(log.run));
      } else if (type == "eval") {
        read_fields(line, eval_fields(log.evals.emplace_back()));
      } else if (type == "summary") {
        read_fields(line, summary_fields(log.summary.emplace()));
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
