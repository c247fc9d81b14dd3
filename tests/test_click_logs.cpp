// Tests for the made-up click logs: the same seeds give the same rows, the hidden model's own rule
// beats the majority class (so the labels are learnable), ids are Zipf-like, and the file reads back
// through the named-column reader.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "io/click_log_file.hpp"
#include "io/sparse_examples.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

std::vector<std::string> lines_of(std::uint64_t truth_seed, std::uint64_t row_seed, int rows) {
  ClickLogGenerator generator(truth_seed, row_seed);
  ClickRow row;
  std::vector<std::string> lines;
  for (int i = 0; i < rows; ++i) {
    generator.next(row);
    std::string line;
    append_click_json_line(row, line);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("click logs are the same for the same seeds and differ for another row seed") {
  const auto first = lines_of(0, 7, 200);
  CHECK(first == lines_of(0, 7, 200));
  CHECK(first != lines_of(0, 8, 200));
  CHECK(first != lines_of(1, 7, 200));
}

TEST_CASE("the hidden model's sign rule beats the majority class on its own rows") {
  ClickLogGenerator generator(0, 1);
  ClickRow row;
  const int rows = 20000;
  int clicks = 0, sign_rule_right = 0;
  for (int i = 0; i < rows; ++i) {
    generator.next(row);
    clicks += row.clicked;
    sign_rule_right += (row.logit > 0) == row.clicked;
  }
  const int majority_right = std::max(clicks, rows - clicks);
  INFO("clicks " << clicks << ", sign rule right " << sign_rule_right << ", majority right " << majority_right);
  CHECK(clicks > 0);
  CHECK(clicks < rows);
  CHECK(sign_rule_right > majority_right);
}

TEST_CASE("each categorical field's ids are Zipf-like: its most common id alone is in a few percent of rows") {
  // With exponent s >= 1.05, rank 1 has probability at least 1 / zeta(1.05), about 5%, whatever the
  // field's size; 5000 uniform draws from 2^32 ids would hardly repeat one. 1% leaves room for chance.
  ClickLogGenerator generator(0, 2);
  ClickRow row;
  const int rows = 5000;
  std::vector<std::map<std::uint32_t, int>> counts(kClickCategoricalFields);
  for (int i = 0; i < rows; ++i) {
    generator.next(row);
    for (std::size_t f = 0; f < kClickCategoricalFields; ++f) ++counts[f][row.ids[f]];
  }
  for (std::size_t f = 0; f < kClickCategoricalFields; ++f) {
    CAPTURE(f);
    int most = 0;
    for (const auto& [id, count] : counts[f]) most = std::max(most, count);
    CHECK(most * 100 > rows);
  }
}

TEST_CASE("a click log file reads back through the named-column reader with every field") {
  testing::TempFolder folder("clicks");
  const auto path = folder.file("clicks.jsonl");
  auto summary = write_click_logs(path, 300, 3, 0);
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  CHECK(summary->rows == 300);
  std::vector<DataColumn> columns;
  for (std::size_t j = 1; j <= kClickCountFields; ++j)
    columns.push_back({"I" + std::to_string(j), ColumnKind::number, std::nullopt});
  for (std::size_t f = 1; f <= kClickCategoricalFields; ++f)
    columns.push_back({"C" + std::to_string(f), ColumnKind::ids, 4294967295ull});
  std::sort(columns.begin(), columns.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  auto data = read_sparse_examples(path, SparseLayout{columns, "label", 1});
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  CHECK(data->count == 300);
  CHECK(data->id_fields.size() == kClickCategoricalFields);
  CHECK(data->number_width() == kClickCountFields);
  CHECK(data->class_names == std::vector<std::string>{"0", "1"});
  std::uint64_t clicks = 0;
  for (auto label : data->labels) clicks += label;
  CHECK(clicks == summary->clicks);
  // The first row's C1 is the generator's first row's id.
  ClickLogGenerator generator(0, 3);
  ClickRow row;
  generator.next(row);
  const auto c1 = std::find_if(data->id_fields.begin(), data->id_fields.end(), [](const IdField& f) { return f.name == "C1"; });
  REQUIRE(c1 != data->id_fields.end());
  CHECK(c1->length(0) == 1);
  CHECK(*c1->bag(0) == row.ids[0]);
}
