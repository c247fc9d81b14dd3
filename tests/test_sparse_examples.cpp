// Tests for named-column examples from JSON Lines, CSV and TSV: ids, texts, numbers and labels as read,
// and one line naming the file, line and column for every refusal.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "io/sparse_examples.hpp"
#include "model/string_hash.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

SparseLayout layout(std::vector<DataColumn> columns, std::string label = "label", std::uint64_t max_tokens = 16) {
  std::sort(columns.begin(), columns.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return SparseLayout{std::move(columns), std::move(label), max_tokens};
}

const SparseLayout kMixed =
    layout({{"tags", ColumnKind::ids, std::nullopt}, {"title", ColumnKind::text, std::nullopt},
            {"price", ColumnKind::number, std::nullopt}});

struct DataFile {
  testing::TempFolder folder{"sparse"};
  std::string path;
  DataFile(const std::string& name, const std::string& text) : path(folder.file(name)) {
    testing::write_file_bytes(path, text);
  }
};

Result<SparseDataset> read(const std::string& name, const std::string& text, const SparseLayout& with = kMixed) {
  DataFile file(name, text);
  return read_sparse_examples(file.path, with);
}

std::vector<std::uint64_t> bag(const SparseDataset& data, std::size_t field, std::size_t example) {
  const auto& ids = data.id_fields.at(field);
  return {ids.bag(example), ids.bag(example) + ids.length(example)};
}

// The error, checked to be one line that starts with the file's name and holds `where`.
std::string refusal(const std::string& name, const std::string& text, const std::string& where,
                    const SparseLayout& with = kMixed) {
  DataFile file(name, text);
  auto data = read_sparse_examples(file.path, with);
  REQUIRE_FALSE(data.ok());
  const auto& message = data.error();
  INFO("message: " << message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.rfind(file.path + where, 0) == 0);
  return message;
}

}  // namespace

TEST_CASE("JSON Lines examples give ids as they are, strings and tokens string-hashed, numbers and labels") {
  auto data = read("examples.jsonl",
                   "{\"title\": \"red  apple\", \"tags\": [3, \"fruit\"], \"price\": 1.5, \"label\": \"food\", "
                   "\"extra\": {\"deep\": [[1]]}}\n"
                   "\n"
                   "{\"label\": \"drink\", \"tags\": 18446744073709551615, \"title\": \"\", \"price\": -2}\n"
                   "{\"label\": \"food\", \"tags\": null, \"title\": null, \"price\": 0}\n");
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  REQUIRE(data->count == 3);
  // Fields in name order: tags, title; numbers: price.
  REQUIRE(data->id_fields.size() == 2);
  CHECK(data->id_fields[0].name == "tags");
  CHECK(data->id_fields[1].name == "title");
  CHECK(bag(*data, 0, 0) == std::vector<std::uint64_t>{3, string_hash("fruit")});
  CHECK(bag(*data, 0, 1) == std::vector<std::uint64_t>{18446744073709551615ull});
  CHECK(bag(*data, 0, 2).empty());
  CHECK(bag(*data, 1, 0) == std::vector<std::uint64_t>{string_hash("red"), string_hash("apple")});
  CHECK(bag(*data, 1, 1).empty());
  CHECK(data->number_names == std::vector<std::string>{"price"});
  CHECK(data->numbers == std::vector<float>{1.5f, -2.0f, 0.0f});
  // String labels are numbered in sorted order, whatever order the file shows them in.
  CHECK(data->class_names == std::vector<std::string>{"drink", "food"});
  CHECK(data->labels == std::vector<std::uint32_t>{1, 0, 1});
}

TEST_CASE("whole-number labels are their own classes, named by their numbers") {
  auto data = read("examples.jsonl", "{\"label\": 2, \"tags\": 1, \"title\": \"a\", \"price\": 1}\n"
                                     "{\"label\": 0, \"tags\": 1, \"title\": \"a\", \"price\": 1}\n");
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  CHECK(data->labels == std::vector<std::uint32_t>{2, 0});
  CHECK(data->class_names == std::vector<std::string>{"0", "1", "2"});
}

TEST_CASE("CSV and TSV examples read the same values through a header naming the columns") {
  const std::string expected_title_0 = "red apple";
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"examples.csv", "label,skipped,title,tags,price\n"
                                                            "food,x,\"red apple\",3 fruit,+1.5\n"
                                                            "drink,y,,18446744073709551615,-2\n"},
        {"examples.tsv", "label\tskipped\ttitle\ttags\tprice\n"
                         "food\tx\tred apple\t3 fruit\t1.5\n"
                         "drink\ty\t\t18446744073709551615\t-2\n"}}) {
    CAPTURE(name);
    auto data = read(name, text);
    REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
    REQUIRE(data->count == 2);
    CHECK(bag(*data, 0, 0) == std::vector<std::uint64_t>{3, string_hash("fruit")});
    CHECK(bag(*data, 0, 1) == std::vector<std::uint64_t>{18446744073709551615ull});
    CHECK(bag(*data, 1, 0) == std::vector<std::uint64_t>{string_hash("red"), string_hash("apple")});
    CHECK(bag(*data, 1, 1).empty());
    CHECK(data->numbers == std::vector<float>{1.5f, -2.0f});
    CHECK(data->class_names == std::vector<std::string>{"drink", "food"});
    CHECK(data->labels == std::vector<std::uint32_t>{1, 0});
  }
}

TEST_CASE("a CSV header saved with a UTF-8 byte order mark still names its first column") {
  auto data = read("bom.csv", "\xEF\xBB\xBFlabel,title,tags,price\nfood,a,1,2\n");
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  CHECK(data->class_names == std::vector<std::string>{"food"});
}

TEST_CASE("an id above a declared max_id is refused naming the file, line, column and range") {
  const auto ranged = layout({{"user", ColumnKind::ids, 99}});
  auto message = refusal("ids.jsonl", "{\"user\": 5, \"label\": 0}\n{\"user\": [7, 100], \"label\": 1}\n", ":2: ", ranged);
  CHECK(contains(message, "column \"user\": id 100 is out of range: data.columns.user declares ids 0 to 99"));
  message = refusal("ids.jsonl", "{\"user\": \"bob\", \"label\": 0}\n", ":1: ", ranged);
  CHECK(contains(message, "column \"user\": \"bob\" is a string, but data.columns.user declares integer ids 0 to 99"));
  message = refusal("ids.csv", "user,label\n5,0\n100,1\n", ":3: ", ranged);
  CHECK(contains(message, "id 100 is out of range"));
  message = refusal("ids.jsonl", "{\"user\": -1, \"label\": 0}\n", ":1: ", ranged);
  CHECK(contains(message, "column \"user\": expected an integer id from 0 to 2^64 - 1, a string, or a list of them, got -1"));
}

TEST_CASE("a text or an ids list over data.max_tokens is refused with its line and column") {
  const auto bounded = layout({{"title", ColumnKind::text, std::nullopt}, {"tags", ColumnKind::ids, std::nullopt}},
                              "label", 3);
  auto message = refusal("long.jsonl", "{\"title\": \"a b c\", \"tags\": [], \"label\": 0}\n"
                                       "{\"title\": \"a b c d\", \"tags\": [], \"label\": 0}\n",
                         ":2: ", bounded);
  CHECK(contains(message, "column \"title\": a text of more than 3 tokens (data.max_tokens)"));
  message = refusal("long.jsonl", "{\"title\": \"\", \"tags\": [1, 2, 3, 4], \"label\": 0}\n", ":1: ", bounded);
  CHECK(contains(message, "column \"tags\": more than 3 ids in one example (data.max_tokens)"));
  message = refusal("long.tsv", "title\ttags\tlabel\na b c d\t1\t0\n", ":2: ", bounded);
  CHECK(contains(message, "a text of more than 3 tokens"));
}

TEST_CASE("a missing column or label is refused with its line") {
  auto message = refusal("missing.jsonl", "{\"title\": \"a\", \"tags\": 1, \"price\": 1, \"label\": 0}\n"
                                          "{\"title\": \"a\", \"price\": 1, \"label\": 0}\n",
                         ":2: ");
  CHECK(contains(message, "column \"tags\": missing"));
  message = refusal("missing.jsonl", "{\"title\": \"a\", \"tags\": 1, \"price\": 1}\n", ":1: ");
  CHECK(contains(message, "column \"label\": missing (the label, data.label)"));
  message = refusal("missing.csv", "title,price,label\na,1,0\n", ":1: ");
  CHECK(contains(message, "the header has no column \"tags\" (declared in [data.columns]); it has 3 columns: title, "
                          "price, label"));
  message = refusal("missing.csv", "title,tags,price,label\na,1,2\n", ":2: ");
  CHECK(contains(message, "3 columns, expected 4 as in the header"));
}

TEST_CASE("a value of the wrong type is refused saying what the column expects") {
  const std::string good = "{\"title\": \"a\", \"tags\": 1, \"price\": 1, \"label\": 0}\n";
  auto message = refusal("types.jsonl", good + "{\"title\": 5, \"tags\": 1, \"price\": 1, \"label\": 0}\n", ":2: ");
  CHECK(contains(message, "column \"title\": expected a string (text), got 5"));
  message = refusal("types.jsonl", "{\"title\": \"a\", \"tags\": 1, \"price\": \"cheap\", \"label\": 0}\n", ":1: ");
  CHECK(contains(message, "column \"price\": expected a number, got the string \"cheap\""));
  message = refusal("types.jsonl", "{\"title\": \"a\", \"tags\": [[1]], \"price\": 1, \"label\": 0}\n", ":1: ");
  CHECK(contains(message, "column \"tags\": expected an integer id from 0 to 2^64 - 1 or a string in the list, got a list"));
  message = refusal("types.jsonl", "{\"title\": \"a\", \"tags\": 1.5, \"price\": 1, \"label\": 0}\n", ":1: ");
  CHECK(contains(message, "column \"tags\": expected an integer id"));
  message = refusal("types.jsonl", "{\"title\": \"a\", \"tags\": 1, \"price\": 1, \"label\": 1.5}\n", ":1: ");
  CHECK(contains(message, "column \"label\": expected a string or a whole number (the label), got the number 1.5"));
  message = refusal("types.jsonl", good + "{\"title\": \"a\", \"tags\": 1, \"price\": 1, \"label\": \"x\"}\n", ":2: ");
  CHECK(contains(message, "column \"label\": a string, but line 1 has a whole-number label"));
  message = refusal("types.jsonl", "[1, 2]\n", ":1: ");
  CHECK(contains(message, "expected a JSON object of columns, got an array"));
  message = refusal("types.jsonl", "{\"title\": \"a\",\n", ":1: ");
  CHECK(contains(message, "not valid JSON at byte"));
  message = refusal("types.jsonl", "{\"title\": \"a\", \"title\": \"b\", \"tags\": 1, \"price\": 1, \"label\": 0}\n",
                    ":1: ");
  CHECK(contains(message, "column \"title\": given twice on one line"));
  message = refusal("types.csv", "title,tags,price,label\na,1,cheap,0\n", ":2: ");
  CHECK(contains(message, "column \"price\": \"cheap\" is not a number"));
}

TEST_CASE("a line longer than any example is refused as soon as that much is read") {
  std::string huge = "{\"title\": \"";
  huge.append(9u << 20, 'a');
  auto message = refusal("huge.jsonl", huge, ":1: ");
  CHECK(contains(message, "line is longer than"));
}

TEST_CASE("a file with no examples, or of no known format, is refused naming it") {
  auto message = refusal("empty.jsonl", "", ": ");
  CHECK(contains(message, "the file is empty"));
  message = refusal("header.csv", "title,tags,price,label\n", ": ");
  CHECK(contains(message, "holds no examples"));
  message = refusal("examples.txt", "title tags\n", ": ");
  CHECK(contains(message, "cannot tell its format"));
  auto data = read("examples.data", "{\"title\": \"a\", \"tags\": 1, \"price\": 1, \"label\": 0}\n");
  CHECK_MESSAGE(data.ok(), "a file that starts with '{' is JSON Lines whatever its name");
}

TEST_CASE("a JSON Lines line over the limit is refused even when it arrives whole, with a newline after it") {
  std::string huge = "{\"title\": \"";
  huge.append(8'400'000, 'a');
  huge += "\", \"tags\": 1, \"price\": 1, \"label\": 0}\n{\"title\": \"b\", \"tags\": 1, \"price\": 1, \"label\": 0}\n";
  auto message = refusal("long.jsonl", huge, ":1: ");
  CHECK(contains(message, "line is longer than 8388608 bytes"));
}
