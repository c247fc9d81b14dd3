// The table is fixed-width text for a terminal and a README; the JSON keeps every sample.
#include "bench/report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace psgrad::bench {

namespace {

// Three significant digits at any magnitude, without scientific notation for everyday sizes.
std::string number(double value) {
  if (value == 0.0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e7 || magnitude < 1e-4) return fmt::format("{:.3g}", value);
  const int digits = std::max(0, 2 - static_cast<int>(std::floor(std::log10(magnitude))));
  return fmt::format("{:.{}f}", value, digits);
}

std::string spread(const Stats& stats) {
  if (stats.samples.size() <= 1 && stats.min == stats.max) return "";
  return number(stats.min) + "–" + number(stats.max);
}

// A figure that was not measured (a skipped peer, a ratio without its denominator) is null, not 0.
nlohmann::json stats_json(const Stats& stats) {
  if (stats.samples.empty())
    return {{"median", nullptr}, {"min", nullptr}, {"max", nullptr}, {"samples", nlohmann::json::array()}};
  return {{"median", stats.median}, {"min", stats.min}, {"max", stats.max}, {"samples", stats.samples}};
}

}  // namespace

const Row* Report::find(const std::string& key) const {
  for (const auto& row : rows_)
    if (row.key == key) return &row;
  return nullptr;
}

void Report::print_table(std::FILE* out) const {
  std::size_t name_width = 11;
  for (const auto& row : rows_) name_width = std::max(name_width, row.name.size());
  fmt::print(out, "{:<14} {:<{}} {:>10} {:>21} {:<12} {}\n", "section", "measurement", name_width,
             "median", "min–max", "unit", "note");
  std::string previous_section;
  for (const auto& row : rows_) {
    if (row.section != previous_section && !previous_section.empty()) fmt::print(out, "\n");
    previous_section = row.section;
    fmt::print(out, "{:<14} {:<{}} {:>10} {:>21} {:<12} {}\n", row.section, row.name, name_width,
               row.stats.samples.empty() ? "—" : number(row.stats.median), spread(row.stats), row.unit, row.note);
  }
  if (targets_.empty()) return;
  fmt::print(out, "\ntargets\n");
  for (const auto& target : targets_)
    fmt::print(out, "  {:<6} {:<58} {:>8} (target {} {})\n", target.met() ? "MET" : "MISSED", target.name,
               number(target.value), target.is_upper_bound ? "<=" : ">=", number(target.threshold));
}

nlohmann::json Report::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : rows_) {
    auto entry = stats_json(row.stats);
    entry["key"] = row.key;
    entry["section"] = row.section;
    entry["name"] = row.name;
    entry["unit"] = row.unit;
    if (!row.note.empty()) entry["note"] = row.note;
    rows.push_back(std::move(entry));
  }
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& target : targets_)
    targets.push_back({{"name", target.name},
                       {"value", target.value},
                       {"threshold", target.threshold},
                       {"upper_bound", target.is_upper_bound},
                       {"met", target.met()}});
  return {{"rows", rows}, {"targets", targets}, {"details", details_}};
}

}  // namespace psgrad::bench
