// Writing made-up click logs (io/click_log_generator.hpp) as a JSON Lines file of named columns.
#pragma once

#include <cstdint>
#include <string>

#include "io/click_log_generator.hpp"
#include "model/result.hpp"

namespace psgrad {

// The most rows written: as many examples as a reader keeps.
constexpr std::uint64_t kMaxClickRows = std::uint64_t{1} << 28;

// Appends {"label": 0 or 1, "I1": count, ..., "I13": count, "C1": id, ..., "C26": id} and '\n'.
void append_click_json_line(const ClickRow& row, std::string& out);

struct ClickLogSummary {
  std::uint64_t rows = 0;
  std::uint64_t clicks = 0;
};

// Writes `rows` rows to `path`, replacing it whole (io/atomic_file.hpp).
Result<ClickLogSummary> write_click_logs(const std::string& path, std::uint64_t rows, std::uint64_t row_seed,
                                         std::uint64_t truth_seed);

}  // namespace psgrad
