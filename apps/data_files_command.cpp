// Writes the JSON Lines files and says what they hold and how long they took.
#include "apps/data_files_command.hpp"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/cli_checks.hpp"
#include "apps/error_exit.hpp"
#include "io/atomic_file.hpp"
#include "io/click_log_file.hpp"
#include "io/debian_packages.hpp"
#include "io/output_path.hpp"

namespace psgrad {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "libs 5020, devel 3115, ...": the largest sections first.
std::string largest_sections(const std::map<std::string, std::uint64_t>& sections, std::size_t shown) {
  std::vector<std::pair<std::string, std::uint64_t>> sorted(sections.begin(), sections.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (std::size_t i = 0; i < sorted.size() && i < shown; ++i)
    text += fmt::format("{}{} {}", i == 0 ? "" : ", ", sorted[i].first, sorted[i].second);
  return text;
}

}  // namespace

void add_debian_packages_options(CLI::App& command, DebianPackagesOptions& options) {
  command.add_option("--lists", options.lists, "folder of apt's package lists (*_Packages, *_Packages.lz4)")
      ->capture_default_str();
  command.add_option("--out", options.out, "JSON Lines file to write")->required();
}

void add_click_logs_options(CLI::App& command, ClickLogsOptions& options) {
  command.add_option("--rows", options.rows, "rows to write")
      ->required()
      ->check(whole_number_within(1, kMaxClickRows));
  command.add_option("--out", options.out, "JSON Lines file to write")->required();
  command.add_option("--seed", options.seed, "seed of the rows drawn")->capture_default_str();
  command.add_option("--truth-seed", options.truth_seed,
                     "seed of the hidden click model; files of one truth seed are one task")
      ->capture_default_str();
}

int run_debian_packages(const DebianPackagesOptions& options) {
  const ErrorExit error{"psgrad data debian-packages"};
  if (auto writable = check_output_path(options.out, "JSON Lines file (--out)"); !writable)
    return error.refused(writable.error());
  const auto start = std::chrono::steady_clock::now();
  auto lists = find_package_lists(options.lists);
  if (!lists) return error.refused(lists.error());
  std::string text;
  auto counts = read_package_lists(*lists, [&text](const PackageRecord& record) {
    text += package_json_line(record);
    return success();
  });
  if (!counts) return error.refused(counts.error());
  // Say what was there, so that lists of stanzas without a Section do not read as empty ones.
  if (counts->packages == 0)
    return error.refused(fmt::format("{}: the package lists hold no packages with a Section ({} stanzas without one "
                                     "and {} repeated names skipped)",
                                     options.lists, counts->unsectioned, counts->duplicates));
  if (auto written = write_file_atomically(options.out, "JSON Lines file", text); !written)
    return error.failed(written.error());
  fmt::print("wrote {} packages in {} sections to {} from {} package lists in {:.2f} s ({} repeated names and {} "
             "without a Section skipped)\n",
             counts->packages, counts->sections.size(), options.out, lists->size(), seconds_since(start),
             counts->duplicates, counts->unsectioned);
  fmt::print("largest sections: {}\n", largest_sections(counts->sections, 8));
  return 0;
}

int run_click_logs(const ClickLogsOptions& options) {
  const ErrorExit error{"psgrad data click-logs"};
  if (auto writable = check_output_path(options.out, "JSON Lines file (--out)"); !writable)
    return error.refused(writable.error());
  const auto start = std::chrono::steady_clock::now();
  auto summary = write_click_logs(options.out, options.rows, options.seed, options.truth_seed);
  if (!summary) return error.failed(summary.error());
  const double seconds = seconds_since(start);
  fmt::print("wrote {} rows to {} ({:.1f}% clicks) in {:.2f} s ({:.0f} rows/s)\n", summary->rows, options.out,
             100.0 * static_cast<double>(summary->clicks) / static_cast<double>(summary->rows), seconds,
             static_cast<double>(summary->rows) / std::max(seconds, 1e-9));
  return 0;
}

}  // namespace psgrad
