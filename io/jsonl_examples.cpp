// JSON Lines through nlohmann's SAX parser: values go straight to the example builder, no document is
// built, and the parser's own stack is a bit per nesting level, so a deeply nested value costs little.
#include "io/jsonl_examples.hpp"

#include <new>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/line_reader.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

using Json = nlohmann::json;

// A scalar as messages name it.
std::string shown_number(double value) { return fmt::format("the number {}", value); }
std::string shown_string(const std::string& text) { return "the string \"" + echoed(text, 40) + "\""; }

// Feeds one line's object to the builder; stops at the first problem, kept in `error`. depth_ counts
// the open objects and arrays: a column's value is read at depth 1, an entry of an ids list at depth 2.
class LineHandler final : public nlohmann::json_sax<Json> {
 public:
  explicit LineHandler(SparseExampleBuilder& builder) : builder_(builder) {}
  std::optional<Error> error;

  bool null() override;
  bool boolean(bool value) override { return wrong_type(value ? "true" : "false"); }
  bool number_integer(std::int64_t value) override;
  bool number_unsigned(std::uint64_t value) override;
  bool number_float(double value, const std::string&) override;
  bool string(std::string& value) override;
  bool binary(Json::binary_t&) override { return wrong_type("binary data"); }
  bool start_object(std::size_t) override;
  bool end_object() override {
    --depth_;
    return true;
  }
  bool key(std::string& name) override {
    if (depth_ == 1) target_ = builder_.target(name);
    return true;
  }
  bool start_array(std::size_t) override;
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& problem) override;

 private:
  // Within the value of a key that is not declared: nothing to read.
  bool skipping() const { return depth_ >= 1 && !target_; }
  bool is_label() const { return *target_ == SparseExampleBuilder::kLabel; }
  bool is_kind(ColumnKind kind) const { return !is_label() && builder_.layout().columns[*target_].kind == kind; }
  bool stop(Status status) {
    if (!status) error = Error{status.error()};
    return status.ok();
  }
  bool wrong_type(const std::string& got);
  std::string expected() const;

  SparseExampleBuilder& builder_;
  int depth_ = 0;
  std::optional<std::size_t> target_;
};

std::string LineHandler::expected() const {
  if (is_label()) return "a string or a whole number (the label)";
  if (depth_ == 2) return "an integer id from 0 to 2^64 - 1 or a string in the list";
  switch (builder_.layout().columns[*target_].kind) {
    case ColumnKind::ids: return "an integer id from 0 to 2^64 - 1, a string, or a list of them";
    case ColumnKind::text: return "a string (text)";
    case ColumnKind::number: return "a number";
  }
  return "";
}

bool LineHandler::wrong_type(const std::string& got) {
  if (depth_ == 0) {
    error = builder_.fail_line("expected a JSON object of columns, got " + got);
    return false;
  }
  if (skipping()) return true;
  error = builder_.fail(*target_, "expected " + expected() + ", got " + got);
  return false;
}

bool LineHandler::null() {
  // A missing value of ids or text: the example has no ids in that column.
  if (depth_ == 1 && target_ && (is_kind(ColumnKind::ids) || is_kind(ColumnKind::text)))
    return stop(builder_.mark_given(*target_));
  return wrong_type("null");
}

bool LineHandler::number_integer(std::int64_t value) {
  if (value >= 0) return number_unsigned(static_cast<std::uint64_t>(value));
  if (depth_ == 1 && target_ && is_kind(ColumnKind::number))
    return stop(builder_.set_number(*target_, static_cast<double>(value)));
  return wrong_type(fmt::format("{}", value));
}

bool LineHandler::number_unsigned(std::uint64_t value) {
  if (depth_ == 0 || skipping()) return wrong_type(fmt::format("{}", value));
  if (depth_ == 2) return stop(builder_.add_integer_id(*target_, value));  // only an ids list gets here
  if (is_label()) return stop(builder_.set_integer_label(value));
  if (is_kind(ColumnKind::ids))
    return stop(builder_.mark_given(*target_)) && stop(builder_.add_integer_id(*target_, value));
  if (is_kind(ColumnKind::number)) return stop(builder_.set_number(*target_, static_cast<double>(value)));
  return wrong_type(fmt::format("{}", value));
}

bool LineHandler::number_float(double value, const std::string&) {
  if (depth_ == 1 && target_ && is_kind(ColumnKind::number)) return stop(builder_.set_number(*target_, value));
  return wrong_type(shown_number(value));
}

bool LineHandler::string(std::string& value) {
  if (depth_ == 0 || skipping()) return wrong_type(shown_string(value));
  if (depth_ == 2) return stop(builder_.add_string_id(*target_, value));
  if (is_label()) return stop(builder_.set_string_label(value));
  if (is_kind(ColumnKind::ids))
    return stop(builder_.mark_given(*target_)) && stop(builder_.add_string_id(*target_, value));
  if (is_kind(ColumnKind::text)) return stop(builder_.set_text(*target_, value));
  return wrong_type(shown_string(value));
}

bool LineHandler::start_object(std::size_t) {
  if (depth_ == 0 || skipping()) {
    ++depth_;
    return true;
  }
  return wrong_type("an object");
}

bool LineHandler::start_array(std::size_t) {
  if (depth_ == 0) return wrong_type("an array");
  if (skipping()) {
    ++depth_;
    return true;
  }
  if (depth_ == 1 && is_kind(ColumnKind::ids)) {
    ++depth_;
    return stop(builder_.mark_given(*target_));
  }
  return wrong_type(depth_ == 2 ? "a list" : "an array");
}

bool LineHandler::parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& problem) {
  // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 8: syntax error ...".
  const std::string what = problem.what();
  const auto column = what.find("column ");
  const auto colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  const auto detail = colon == std::string::npos ? what : what.substr(colon + 2);
  error = builder_.fail_line(fmt::format("not valid JSON at byte {}: {}", position, echoed(detail, 120)));
  return false;
}

bool is_blank_line(std::string_view line) { return line.find_first_not_of(" \t\r\n") == std::string_view::npos; }

}  // namespace

Result<SparseDataset> read_jsonl_examples(const std::string& path, const SparseLayout& layout) {
  auto lines = LineReader::open(path, "JSON Lines file", kMaxJsonlBytes, kMaxJsonlLineBytes,
                                "more than any example psgrad reads");
  if (!lines) return Error{lines.error()};
  SparseExampleBuilder builder(path, layout);
  try {
    for (;;) {
      auto next = lines->next();
      if (!next) return Error{next.error()};
      if (!*next) break;
      const auto line = **next;
      if (is_blank_line(line)) continue;
      builder.start_example(lines->line());
      LineHandler handler(builder);
      const bool parsed = Json::sax_parse(line.begin(), line.end(), &handler);
      if (handler.error) return *handler.error;
      if (!parsed) return builder.fail_line("not valid JSON");
      if (auto ended = builder.end_example(); !ended) return Error{ended.error()};
    }
  } catch (const std::bad_alloc&) {
    return Error{fmt::format("{}: not enough memory for its examples", path)};
  }
  if (lines->file_size() == 0) return Error{fmt::format("{}: holds no examples: the file is empty (0 bytes)", path)};
  return builder.finish();
}

}  // namespace psgrad
