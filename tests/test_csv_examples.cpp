// Tests for CSV examples: headers, label columns, scaling, quoting, and one line naming file, line and
// column for every bad row.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/csv_examples.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool is_one_line(const std::string& text) { return text.find('\n') == std::string::npos; }

struct CsvFile {
  testing::TempFolder folder{"csv"};
  std::string path;
  explicit CsvFile(const std::string& text, const std::string& name = "examples.csv") : path(folder.file(name)) {
    testing::write_file_bytes(path, text);
  }
};

Result<LabeledExamples> read(const std::string& text, CsvLayout layout = CsvLayout{0, 1.0}) {
  CsvFile file(text);
  return read_csv_examples(file.path, layout);
}

std::vector<float> floats(const LabeledExamples& examples) { return {examples.inputs.begin(), examples.inputs.end()}; }

}  // namespace

TEST_CASE("a CSV file with a header row gives one example per row, the label from column 0") {
  auto examples = read("label,a,b,c\n2,0.5,1,-3\n0,4,5e-1,6\n");
  REQUIRE_MESSAGE(examples.ok(), (examples.ok() ? "" : examples.error()));
  CHECK(examples->count == 2);
  CHECK(examples->width == 3);
  CHECK(examples->labels == std::vector<std::uint8_t>{2, 0});
  CHECK(floats(*examples) == std::vector<float>{0.5f, 1.0f, -3.0f, 4.0f, 0.5f, 6.0f});
  CHECK(examples->image_rows == 0);
}

TEST_CASE("a CSV file without a header starts its examples on the first row") {
  auto examples = read("1,10\n0,20\n");
  REQUIRE(examples.ok());
  CHECK(examples->count == 2);
  CHECK(examples->labels == std::vector<std::uint8_t>{1, 0});
}

TEST_CASE("a first row that counts its ten or more columns, as pandas writes integer column names, is a header") {
  auto from_zero = read("0,1,2,3,4,5,6,7,8,9\n1,1,1,1,1,1,1,1,1,1\n");
  REQUIRE(from_zero.ok());
  CHECK(from_zero->count == 1);
  CHECK(from_zero->labels == std::vector<std::uint8_t>{1});
  auto from_one = read("1,2,3,4,5,6,7,8,9,10\n1,1,1,1,1,1,1,1,1,1\n");
  REQUIRE(from_one.ok());
  CHECK(from_one->count == 1);
  auto short_row = read("0,1\n1,5\n");  // label 0, feature 1: an example, not a header
  REQUIRE(short_row.ok());
  CHECK(short_row->count == 2);
}

TEST_CASE("label_column -1 takes the last column and the others stay features in order") {
  auto examples = read("a,b,label\n7,8,3\n", CsvLayout{-1, 1.0});
  REQUIRE(examples.ok());
  CHECK(examples->labels == std::vector<std::uint8_t>{3});
  CHECK(floats(*examples) == std::vector<float>{7.0f, 8.0f});
  auto middle = read("7,3,8\n", CsvLayout{1, 1.0});
  REQUIRE(middle.ok());
  CHECK(middle->labels == std::vector<std::uint8_t>{3});
  CHECK(floats(*middle) == std::vector<float>{7.0f, 8.0f});
}

TEST_CASE("without a label column every column is a feature") {
  auto examples = read("7,3,8\n", CsvLayout{std::nullopt, 1.0});
  REQUIRE(examples.ok());
  CHECK(examples->labels.empty());
  CHECK(examples->width == 3);
}

TEST_CASE("scale 1/255 turns pixel bytes into exactly the floats the IDX reader makes") {
  std::string text;
  for (int byte = 0; byte < 256; ++byte) text += fmt::format("0,{}\n", byte);
  auto examples = read(text, CsvLayout{0, 1.0 / 255.0});
  REQUIRE(examples.ok());
  REQUIRE(examples->count == 256);
  for (int byte = 0; byte < 256; ++byte) {
    CAPTURE(byte);
    CHECK(examples->inputs[static_cast<std::size_t>(byte)] == static_cast<float>(byte) / 255.0f);
  }
}

TEST_CASE("quoted fields, spaces, CRLF line ends, a leading + and blank lines are read as numbers") {
  auto examples = read("\"label\",\"x\"\r\n\"1\", 2.5 \r\n\r\n0,+3\r\n");
  REQUIRE_MESSAGE(examples.ok(), (examples.ok() ? "" : examples.error()));
  CHECK(examples->count == 2);
  CHECK(floats(*examples) == std::vector<float>{2.5f, 3.0f});
}

TEST_CASE("every bad row is refused in one line naming the file, the line and the column") {
  struct Case {
    std::string what;
    std::string text;
    CsvLayout layout;
    const char* expected;  // after "<path>:"
  };
  const std::vector<Case> cases{
      {"a word among numbers", "label,a,b\n1,2,3\n0,4,five\n", {0, 1.0}, "3: column 3: \"five\" is not a number"},
      {"an empty field", "1,2,3\n0,,3\n", {0, 1.0}, "2: column 2: empty, expected a number"},
      {"a short row", "1,2,3\n0,4\n", {0, 1.0}, "2: 2 columns, expected 3 as in line 1"},
      {"a long row", "1,2,3\n0,4,5,6\n", {0, 1.0}, "2: more than the 3 columns of line 1"},
      {"a fractional label", "1,2\n0.5,3\n", {0, 1.0}, "2: column 1: label \"0.5\": expected a whole number from 0 to 255"},
      {"a negative label", "1,2\n-1,3\n", {0, 1.0}, "2: column 1: label \"-1\""},
      {"a label beyond 255", "x,y\n256,3\n", {0, 1.0}, "2: column 1: label \"256\""},
      {"a label column outside the row", "1,2\n", {5, 1.0}, "1: data.label_column 5 is outside this row's 2 columns"},
      {"a NaN feature", "1,nan\n", {0, 1.0}, "1: column 2: \"nan\" is not a finite number"},
      {"a feature that overflows float", "1,1e300\n", {0, 1.0}, "1: column 2: \"1e300\" times data.scale 1 is not a finite float"},
      {"a stray quote", "1,2\n0,3\"4\n", {0, 1.0}, "2: not valid CSV"},
      {"only a label column", "1\n2\n", {0, 1.0}, "1: 0 feature columns"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    CsvFile file(c.text);
    auto examples = read_csv_examples(file.path, c.layout);
    REQUIRE_FALSE(examples.ok());
    CHECK_MESSAGE(examples.error().rfind(file.path + ":" + c.expected, 0) == 0, examples.error());
    CHECK(is_one_line(examples.error()));
  }
}

TEST_CASE("an empty CSV file and one with only a header are refused") {
  CsvFile empty("");
  auto none = read_csv_examples(empty.path, CsvLayout{});
  REQUIRE_FALSE(none.ok());
  CHECK(contains(none.error(), "holds no rows"));
  CsvFile header("label,a,b\n");
  auto header_only = read_csv_examples(header.path, CsvLayout{0, 1.0});
  REQUIRE_FALSE(header_only.ok());
  CHECK(contains(header_only.error(), "holds a header but no examples"));
}

TEST_CASE("read_csv_examples refuses a character device before reading it") {
  auto examples = read_csv_examples("/dev/zero", CsvLayout{});
  REQUIRE_FALSE(examples.ok());
  CHECK(contains(examples.error(), "/dev/zero: is a character device, not a CSV file"));
}

TEST_CASE("peek_csv_shape counts the columns and the example lines, past a header") {
  CsvFile file("label,a,b\n1,2,3\n\n0,4,5\n");
  auto shape = peek_csv_shape(file.path);
  REQUIRE(shape.ok());
  CHECK(shape->columns == 3);
  CHECK(shape->has_header);
  CHECK(shape->data_lines == 2);
}

TEST_CASE("a CSV line longer than any row is refused at once, a sparse 2 GB file included, and so is an empty file") {
  testing::TempFolder folder("csv-bounds");
  const auto sparse = folder.file("sparse.csv");
  { std::ofstream(sparse) << ""; }
  std::filesystem::resize_file(sparse, std::uint64_t{2} << 30);  // holes: no disk, all NUL bytes, no newline
  const auto started = std::chrono::steady_clock::now();
  const auto refused = read_csv_examples(sparse, CsvLayout{0, 1.0});
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  REQUIRE_FALSE(refused.ok());
  CHECK(is_one_line(refused.error()));
  CHECK(contains(refused.error(), sparse + ":1: line is longer than 33554432 bytes"));
  // Refused after the bound's 32 MiB were read, not the file's 2 GiB (which took 102 s and 6.1 GB).
  CHECK(seconds < 20);
  const auto peeked = peek_csv_shape(sparse);
  REQUIRE_FALSE(peeked.ok());
  CHECK(contains(peeked.error(), "line is longer than"));
  const auto quoted = read("1,\"" + std::string(40u << 20, '9') + "\n" + "\"\n");
  REQUIRE_FALSE(quoted.ok());
  CHECK(contains(quoted.error(), "longer than"));
  const auto empty = read("");
  REQUIRE_FALSE(empty.ok());
  CHECK(contains(empty.error(), "holds no rows: the file is empty (0 bytes)"));
}

TEST_CASE("CSV examples read through a bounded buffer keep memory to the examples kept") {
  std::string text = "label,a,b\n";
  for (int i = 0; i < 50000; ++i) text += "1,0.5,2\n";
  const auto examples = read(text);
  REQUIRE(examples.ok());
  CHECK(examples->count == 50000);
  CHECK(examples->inputs.capacity() == examples->inputs.size());
  CHECK(examples->labels.capacity() == examples->labels.size());
}

TEST_CASE("a quote never closed is refused at the line that opened it, not at the end of the file") {
  std::string text = "label,a,b\n";
  for (int i = 0; i < 100; ++i) text += std::to_string(i % 3) + "," + std::to_string(i) + ",1\n";
  text += "1,\"oops,3\n";  // line 102
  for (int i = 0; i < 500; ++i) text += std::to_string(i % 3) + "," + std::to_string(i) + ",1\n";
  auto examples = read(text);
  REQUIRE_FALSE(examples.ok());
  CHECK(examples.error().find(":102: not valid CSV: a quoted field opened on this line is never closed (it runs to "
                              "the end of the file, line 602)") != std::string::npos);
}
