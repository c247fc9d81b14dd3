// CSV parsing through libcsv (RFC 4180 quoting, CRLF), fed one physical line at a time so that every
// error can name its line; numbers through std::from_chars.
#include "io/csv_examples.hpp"

#include <csv.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "io/bounded_file.hpp"
#include "io/line_reader.hpp"
#include "io/machine_memory.hpp"
#include "io/user_text.hpp"

namespace psgrad {
namespace {

// A field as messages show it: quoted, at most 40 characters.
std::string shown(const char* text, std::size_t length) {
  return "\"" + echoed(std::string_view(text ? text : "", length), 40) + "\"";
}

std::optional<double> parse_number(const char* text, std::size_t length) {
  // from_chars takes no leading '+', which spreadsheets write.
  if (length > 1 && text[0] == '+' && text[1] != '-') {
    ++text;
    --length;
  }
  double value = 0;
  const auto [end, code] = std::from_chars(text, text + length, value);
  if (code != std::errc() || end != text + length) return std::nullopt;
  return value;
}

// A first row of 0, 1, 2, ... or 1, 2, 3, ... names its columns: pandas writes integer column names so.
// Only for rows of at least 10 columns: "0,1" may well be an example (label 0, feature 1), while an
// example counting through ten or more columns would be a strange one.
constexpr std::size_t kCountingHeaderColumns = 10;
bool counts_its_columns(const std::vector<double>& values) {
  if (values.size() < kCountingHeaderColumns) return false;
  for (double start : {0.0, 1.0}) {
    bool counts = true;
    for (std::size_t i = 0; i < values.size() && counts; ++i) counts = values[i] == start + static_cast<double>(i);
    if (counts) return true;
  }
  return false;
}

// The state libcsv's callbacks fill, row by row.
class CsvReading {
 public:
  CsvReading(std::string path, CsvLayout layout) : path_(std::move(path)), layout_(layout) {}

  static void on_field(void* text, std::size_t length, void* self) {
    static_cast<CsvReading*>(self)->field(static_cast<const char*>(text), length);
  }
  static void on_row_end(int, void* self) {
    auto* reading = static_cast<CsvReading*>(self);
    ++reading->rows_ended_;
    reading->row_end();
  }
  // Rows libcsv has ended so far (every row, kept or not).
  std::uint64_t rows_ended() const { return rows_ended_; }

  void set_line(std::uint64_t line) { line_ = line; }
  bool failed() const { return error_.has_value(); }
  const std::optional<Error>& error() const { return error_; }
  bool header_only() const { return first_row_done_ && examples_.count == 0; }
  std::size_t columns() const { return columns_; }
  bool has_header() const { return has_header_; }
  LabeledExamples take() { return std::move(examples_); }
  // Stops after the first row: enough to learn its shape.
  void stop_after_first_row() { first_row_only_ = true; }

 private:
  void fail(std::size_t column, const std::string& what) {
    if (!error_) error_ = Error{fmt::format("{}:{}: column {}: {}", path_, line_, column + 1, what)};
  }
  void fail_row(const std::string& what) {
    if (!error_) error_ = Error{fmt::format("{}:{}: {}", path_, line_, what)};
  }

  void field(const char* text, std::size_t length) {
    if (error_) return;
    if (!first_row_done_) {
      first_row_.emplace_back(text ? text : "", length);
      return;
    }
    if (column_ >= columns_) {
      fail_row(fmt::format("more than the {} columns of line {}", columns_, first_line_));
      return;
    }
    store(column_++, text, length);
  }

  void store(std::size_t column, const char* text, std::size_t length) {
    const auto value = parse_number(text ? text : "", length);
    if (!value) {
      fail(column, length == 0 ? "empty, expected a number" : fmt::format("{} is not a number", shown(text, length)));
      return;
    }
    if (label_index_ && column == *label_index_) {
      auto label = label_value(*value);
      if (!label) return fail(column, fmt::format("label {}: {}", shown(text, length), label.error()));
      examples_.labels.push_back(*label);
      return;
    }
    const auto scaled = static_cast<float>(*value * layout_.scale);
    if (!std::isfinite(scaled)) {
      fail(column, std::isfinite(*value) ? fmt::format("{} times data.scale {} is not a finite float",
                                                         shown(text, length), layout_.scale)
                                         : fmt::format("{} is not a finite number", shown(text, length)));
      return;
    }
    examples_.inputs.push_back(scaled);
  }

  void row_end() {
    if (error_) return;
    if (!first_row_done_) return first_row_end();
    if (column_ != columns_)
      return fail_row(fmt::format("{} columns, expected {} as in line {}", column_, columns_, first_line_));
    column_ = 0;
    if (++examples_.count > kMaxExamples) fail_row(fmt::format("more than {} rows", kMaxExamples));
  }

  void first_row_end() {
    first_row_done_ = true;
    first_line_ = line_;
    columns_ = first_row_.size();
    std::vector<double> values;
    bool numeric = true;
    for (const auto& text : first_row_) {
      const auto value = parse_number(text.data(), text.size());
      numeric = numeric && value.has_value();
      if (value) values.push_back(*value);
    }
    has_header_ = !numeric || counts_its_columns(values);
    if (first_row_only_) return;
    if (layout_.label_column) {
      const std::int64_t wanted = *layout_.label_column;
      const std::int64_t resolved = wanted < 0 ? wanted + static_cast<std::int64_t>(columns_) : wanted;
      if (resolved < 0 || resolved >= static_cast<std::int64_t>(columns_))
        return fail_row(fmt::format("data.label_column {} is outside this row's {} columns (0 to {}, or -1 to -{} "
                                    "from the end)",
                                    wanted, columns_, columns_ - 1, columns_));
      label_index_ = static_cast<std::size_t>(resolved);
    }
    const std::size_t features = columns_ - (label_index_ ? 1 : 0);
    if (features == 0 || features > kMaxFeatures)
      return fail_row(fmt::format("{} feature columns; expected 1 to {}", features, kMaxFeatures));
    examples_.width = features;
    examples_.origin = path_;
    if (has_header_) return;
    for (std::size_t column = 0; column < columns_; ++column)
      store(column, first_row_[column].data(), first_row_[column].size());
    if (!error_) examples_.count = 1;
  }

  std::string path_;
  CsvLayout layout_;
  std::uint64_t line_ = 0;
  std::uint64_t rows_ended_ = 0;
  bool first_row_done_ = false;
  bool first_row_only_ = false;
  bool has_header_ = false;
  std::uint64_t first_line_ = 0;
  std::vector<std::string> first_row_;
  std::size_t columns_ = 0;
  std::size_t column_ = 0;
  std::optional<std::size_t> label_index_;
  LabeledExamples examples_;
  std::optional<Error> error_;
};

struct ParserFreer {
  void operator()(csv_parser* parser) const { csv_free(parser); }
};

// The longest line read: a row of kMaxFeatures columns of about 30 characters each. A longer line is
// no row this reader would keep (a sparse or binary file, a missing newline), and is refused as soon
// as that much has been read, rather than held whole while the parser copies it.
constexpr std::size_t kMaxCsvLineBytes = std::size_t{32} << 20;

Result<LineReader> open_csv(const std::string& path) {
  return LineReader::open(path, "CSV file", kMaxCsvBytes, kMaxCsvLineBytes,
                          fmt::format("more than any row of at most {} columns", kMaxFeatures + 1));
}

// Feeds the file to libcsv line by line; stops at the first error, or after the first row when asked.
Status parse_lines(const std::string& path, LineReader& lines, CsvReading& reading, bool first_row_only) {
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL) != 0)
    return Error{fmt::format("{}: cannot start the CSV parser", path)};
  std::unique_ptr<csv_parser, ParserFreer> owned(&parser);
  // A quoted field may span lines; its row is bounded as a line is.
  std::size_t row_bytes = 0;
  std::uint64_t rows_before = reading.rows_ended();
  std::uint64_t row_start = 1;  // the line the row under way began on
  while (!reading.failed()) {
    auto next = lines.next();
    if (!next) return Error{next.error()};
    if (!*next) break;
    const auto line = **next;
    reading.set_line(lines.line());
    if (csv_parse(&parser, line.data(), line.size(), CsvReading::on_field, CsvReading::on_row_end, &reading) !=
        line.size())
      return Error{fmt::format("{}:{}: not valid CSV: {}", path, lines.line(), csv_strerror(csv_error(&parser)))};
    row_bytes = reading.rows_ended() == rows_before ? row_bytes + line.size() : 0;
    if (reading.rows_ended() != rows_before) row_start = lines.line() + 1;
    rows_before = reading.rows_ended();
    if (row_bytes > kMaxCsvLineBytes)
      return Error{fmt::format("{}:{}: a quoted field runs over more than {} bytes, more than any row", path,
                               lines.line(), kMaxCsvLineBytes)};
    if (first_row_only && reading.columns() > 0) break;
  }
  if (!reading.failed() && !(first_row_only && reading.columns() > 0) &&
      csv_fini(&parser, CsvReading::on_field, CsvReading::on_row_end, &reading) != 0) {
    // The one error at the end of the file: a quote opened and never closed, which took every line after it.
    if (row_start < lines.line())
      return Error{fmt::format("{}:{}: not valid CSV: a quoted field opened on this line is never closed (it runs "
                               "to the end of the file, line {})",
                               path, row_start, lines.line())};
    return Error{fmt::format("{}:{}: not valid CSV: {}", path, lines.line(), csv_strerror(csv_error(&parser)))};
  }
  if (reading.error()) return *reading.error();
  return success();
}

// Said of a file with no row: an empty file is not a CSV file with rows in it.
Error no_rows(const std::string& path, const LineReader& lines) {
  if (lines.file_size() == 0) return Error{fmt::format("{}: holds no rows: the file is empty (0 bytes)", path)};
  return Error{fmt::format("{}: holds no rows", path)};
}

}  // namespace

Result<LabeledExamples> read_csv_examples(const std::string& path, const CsvLayout& layout) {
  auto lines = open_csv(path);
  if (!lines) return Error{lines.error()};
  CsvReading reading(path, layout);
  try {
    if (auto parsed = parse_lines(path, *lines, reading, false); !parsed) return Error{parsed.error()};
  } catch (const std::bad_alloc&) {
    return Error{fmt::format("{}: not enough memory for its examples", path)};
  }
  if (reading.columns() == 0) return no_rows(path, *lines);
  if (reading.header_only()) return Error{fmt::format("{}: holds a header but no examples", path)};
  auto examples = reading.take();
  // Growth by doubling may have left up to half of each buffer unused: memory stays with what is kept.
  examples.inputs.shrink_to_fit();
  examples.labels.shrink_to_fit();
  return examples;
}

Result<CsvShape> peek_csv_shape(const std::string& path) {
  auto lines = open_csv(path);
  if (!lines) return Error{lines.error()};
  CsvReading reading(path, CsvLayout{});
  reading.stop_after_first_row();
  if (auto parsed = parse_lines(path, *lines, reading, true); !parsed) return Error{parsed.error()};
  if (reading.columns() == 0) return no_rows(path, *lines);
  CsvShape shape;
  shape.columns = reading.columns();
  shape.has_header = reading.has_header();
  // The first row's lines, then every later line that holds more than blanks.
  std::uint64_t lines_counted = lines->line();
  for (;;) {
    auto next = lines->next();
    if (!next) return Error{next.error()};
    if (!*next) break;
    if ((*next)->find_first_not_of(" \t\r\n") != std::string_view::npos) ++lines_counted;
  }
  shape.data_lines = lines_counted - (shape.has_header ? 1 : 0);
  return shape;
}

}  // namespace psgrad
