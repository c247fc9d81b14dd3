// Rows formatted with std::to_chars into a buffer written a megabyte at a time: the writer keeps up with
// the generator (hundreds of thousands of rows a second).
#include "io/click_log_file.hpp"

#include <charconv>

#include "io/atomic_file.hpp"

namespace psgrad {

namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

void append_number(std::uint64_t value, std::string& out) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

// "I1" ... "I13", "C1" ... "C26": Criteo's column names.
void append_key(char letter, std::size_t index, std::string& out) {
  out += ",\"";
  out += letter;
  append_number(index + 1, out);
  out += "\":";
}

}  // namespace

void append_click_json_line(const ClickRow& row, std::string& out) {
  out += row.clicked ? "{\"label\":1" : "{\"label\":0";
  for (std::size_t j = 0; j < kClickCountFields; ++j) {
    append_key('I', j, out);
    append_number(row.counts[j], out);
  }
  for (std::size_t f = 0; f < kClickCategoricalFields; ++f) {
    append_key('C', f, out);
    append_number(row.ids[f], out);
  }
  out += "}\n";
}

Result<ClickLogSummary> write_click_logs(const std::string& path, std::uint64_t rows, std::uint64_t row_seed,
                                         std::uint64_t truth_seed) {
  ClickLogSummary summary;
  auto written = write_file_atomically(path, "JSON Lines file", [&](int fd) -> Status {
    ClickLogGenerator generator(truth_seed, row_seed);
    ClickRow row;
    std::string buffer;
    buffer.reserve(kFlushBytes + 1024);
    for (std::uint64_t i = 0; i < rows; ++i) {
      generator.next(row);
      summary.clicks += row.clicked;
      append_click_json_line(row, buffer);
      if (buffer.size() >= kFlushBytes) {
        if (auto flushed = write_fully(fd, buffer.data(), buffer.size()); !flushed) return flushed;
        buffer.clear();
      }
    }
    summary.rows = rows;
    return write_fully(fd, buffer.data(), buffer.size());
  });
  if (!written) return Error{written.error()};
  return summary;
}

}  // namespace psgrad
