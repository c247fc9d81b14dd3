// Named-column CSV and TSV through libcsv, fed one physical line at a time as io/csv_examples.cpp does,
// so every error can name its line.
#include "io/delimited_examples.hpp"

#include <csv.h>

#include <charconv>
#include <memory>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "io/csv_examples.hpp"
#include "io/line_reader.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

// A row of many text columns; a longer line is refused as soon as that much is read.
constexpr std::size_t kMaxRowBytes = std::size_t{8} << 20;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::optional<std::uint64_t> whole_number(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (code != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> number(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);  // spreadsheets write it
  double value = 0;
  const auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || code != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The state libcsv's callbacks fill: the header's targets, then each row's cells.
class DelimitedReading {
 public:
  DelimitedReading(const std::string& path, const SparseLayout& layout) : path_(path), builder_(path, layout) {}

  static void on_field(void* text, std::size_t length, void* self) {
    auto* reading = static_cast<DelimitedReading*>(self);
    reading->field(std::string_view(text ? static_cast<const char*>(text) : "", text ? length : 0));
  }
  static void on_row_end(int, void* self) { static_cast<DelimitedReading*>(self)->row_end(); }

  void set_line(std::uint64_t line) {
    line_ = line;
    if (column_ == 0 && header_done_) builder_.start_example(line);
  }
  const std::optional<Error>& error() const { return error_; }
  bool header_done() const { return header_done_; }
  Result<SparseDataset> finish() { return builder_.finish(); }

 private:
  void keep(Status status) {
    if (!status && !error_) error_ = Error{status.error()};
  }

  void field(std::string_view text) {
    if (error_) return;
    if (!header_done_) {
      header_.emplace_back(text);
      return;
    }
    if (column_ >= targets_.size()) {
      error_ = builder_.fail_line(fmt::format("more than the {} columns of the header", targets_.size()));
      return;
    }
    if (const auto target = targets_[column_++]) keep(cell(*target, text));
  }

  Status cell(std::size_t target, std::string_view text) {
    if (target == SparseExampleBuilder::kLabel) {
      if (text.empty()) return builder_.fail(target, "empty, expected a label");
      if (const auto value = whole_number(text)) return builder_.set_integer_label(*value);
      return builder_.set_string_label(text);
    }
    switch (builder_.layout().columns[target].kind) {
      case ColumnKind::text: return builder_.set_text(target, text);
      case ColumnKind::number: {
        const auto value = number(text);
        if (!value)
          return builder_.fail(target, text.empty() ? "empty, expected a number"
                                                    : fmt::format("\"{}\" is not a number", echoed(text, 40)));
        return builder_.set_number(target, *value);
      }
      case ColumnKind::ids: break;
    }
    if (auto given = builder_.mark_given(target); !given) return given;
    std::size_t at = 0;
    while (at < text.size()) {
      while (at < text.size() && is_blank(text[at])) ++at;
      std::size_t end = at;
      while (end < text.size() && !is_blank(text[end])) ++end;
      if (end == at) break;
      const auto token = text.substr(at, end - at);
      const auto value = whole_number(token);
      auto added = value ? builder_.add_integer_id(target, *value) : builder_.add_string_id(target, token);
      if (!added) return added;
      at = end;
    }
    return success();
  }

  void row_end() {
    if (error_) return;
    if (!header_done_) return header_end();
    if (column_ != targets_.size()) {
      error_ = builder_.fail_line(fmt::format("{} columns, expected {} as in the header", column_, targets_.size()));
      return;
    }
    column_ = 0;
    keep(builder_.end_example());
  }

  // Every declared column and the label must be in the header, once.
  void header_end() {
    header_done_ = true;
    // Spreadsheets save "CSV UTF-8" with a byte order mark, which is no part of the first name.
    if (!header_.empty() && header_[0].rfind("\xEF\xBB\xBF", 0) == 0) header_[0].erase(0, 3);
    std::vector<bool> found(builder_.layout().columns.size() + 1, false);
    for (const auto& name : header_) {
      auto target = builder_.target(name);
      if (target) {
        const std::size_t index = *target == SparseExampleBuilder::kLabel ? found.size() - 1 : *target;
        if (found[index]) {
          error_ = Error{fmt::format("{}:{}: the header names column \"{}\" twice", path_, line_, echoed(name, 40))};
          return;
        }
        found[index] = true;
      }
      targets_.push_back(target);
    }
    for (std::size_t index = 0; index < found.size(); ++index) {
      if (found[index]) continue;
      const bool label = index + 1 == found.size();
      if (label && builder_.layout().without_labels) continue;
      const auto& name = label ? builder_.layout().label : builder_.layout().columns[index].name;
      error_ = Error{fmt::format("{}:{}: the header has no column \"{}\" ({}); it has {} columns: {}", path_, line_,
                                 echoed(name, 40), label ? "data.label" : "declared in [data.columns]",
                                 header_.size(), echoed(fmt::format("{}", fmt::join(header_, ", ")), 120))};
      return;
    }
    header_.clear();
  }

  std::string path_;
  SparseExampleBuilder builder_;
  std::uint64_t line_ = 0;
  bool header_done_ = false;
  std::vector<std::string> header_;
  std::vector<std::optional<std::size_t>> targets_;  // per file column: what it feeds, if anything
  std::size_t column_ = 0;
  std::optional<Error> error_;
};

struct ParserFreer {
  void operator()(csv_parser* parser) const { csv_free(parser); }
};

}  // namespace

Result<SparseDataset> read_delimited_examples(const std::string& path, const SparseLayout& layout, char delimiter) {
  const char* what = delimiter == '\t' ? "TSV file" : "CSV file";
  auto lines = LineReader::open(path, what, kMaxCsvBytes, kMaxRowBytes, "more than any row psgrad reads");
  if (!lines) return Error{lines.error()};
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL) != 0)
    return Error{fmt::format("{}: cannot start the CSV parser", path)};
  std::unique_ptr<csv_parser, ParserFreer> owned(&parser);
  csv_set_delim(&parser, delimiter);
  DelimitedReading reading(path, layout);
  try {
    while (!reading.error()) {
      auto next = lines->next();
      if (!next) return Error{next.error()};
      if (!*next) break;
      const auto line = **next;
      reading.set_line(lines->line());
      if (csv_parse(&parser, line.data(), line.size(), DelimitedReading::on_field, DelimitedReading::on_row_end,
                    &reading) != line.size())
        return Error{fmt::format("{}:{}: not valid {}: {}", path, lines->line(), what,
                                 csv_strerror(csv_error(&parser)))};
    }
    if (!reading.error() &&
        csv_fini(&parser, DelimitedReading::on_field, DelimitedReading::on_row_end, &reading) != 0)
      return Error{fmt::format("{}:{}: not valid {}: {}", path, lines->line(), what, csv_strerror(csv_error(&parser)))};
  } catch (const std::bad_alloc&) {
    return Error{fmt::format("{}: not enough memory for its examples", path)};
  }
  if (reading.error()) return *reading.error();
  if (!reading.header_done())
    return Error{fmt::format("{}: holds no header row naming its columns{}", path,
                             lines->file_size() == 0 ? ": the file is empty (0 bytes)" : "")};
  return reading.finish();
}

}  // namespace psgrad
