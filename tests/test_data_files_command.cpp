// Tests for `psgrad data debian-packages` and `psgrad data click-logs` run as a user would: the files
// they write read back, the counts they print, and one-line refusals.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "io/sparse_examples.hpp"
#include "tests/psgrad_binary.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* kAptLists = "/var/lib/apt/lists";

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

bool has_package_list(const std::string& folder) {
  std::error_code error;
  for (std::filesystem::directory_iterator entry(folder, error), end; !error && entry != end; entry.increment(error)) {
    const auto name = entry->path().filename().string();
    if (ends_with(name, "_Packages") || ends_with(name, "_Packages.lz4")) return true;
  }
  return false;
}

// The columns `psgrad data debian-packages` writes, as docs/sparse-data.md declares them.
SparseLayout package_layout() {
  return SparseLayout{{{"depends", ColumnKind::ids, std::nullopt},
                       {"maintainer", ColumnKind::ids, std::nullopt},
                       {"name_parts", ColumnKind::ids, std::nullopt},
                       {"summary", ColumnKind::text, std::nullopt}},
                      "section",
                      1024};
}

}  // namespace

TEST_CASE("psgrad data debian-packages converts this machine's apt lists into records a config can read") {
  // The lists are whatever `apt-get update` left on this machine, which no test set-up provides: a
  // machine without them skips here, on CI too.
  if (!has_package_list(kAptLists)) {
    MESSAGE("skipped: " << kAptLists << " holds no *_Packages or *_Packages.lz4 file (run apt-get update)");
    return;
  }
  testing::TempFolder folder("debian");
  const auto out = folder.file("packages.jsonl");
  const auto run = testing::run_psgrad("data debian-packages --out " + out);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.output, "wrote "));
  CHECK(contains(run.output, " packages in "));
  CHECK(contains(run.output, "largest sections: "));
  auto data = read_sparse_examples(out, package_layout());
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  CHECK(contains(run.output, "wrote " + std::to_string(data->count) + " packages in " +
                                 std::to_string(data->num_classes()) + " sections"));
  CHECK(data->num_classes() > 1);
}

TEST_CASE("psgrad data debian-packages refuses a folder without lists in one line") {
  testing::TempFolder folder("debian");
  const auto run = testing::run_psgrad("data debian-packages --lists " + folder.path.string() + " --out " +
                                       folder.file("out.jsonl"));
  CHECK(run.exit_code == 2);
  CHECK(testing::line_count(run.output) == 1);
  CHECK(contains(run.output, "holds no package list"));
  CHECK_FALSE(std::filesystem::exists(folder.file("out.jsonl")));
}

TEST_CASE("psgrad data debian-packages refuses lists without a Section in one line that counts what it skipped") {
  testing::TempFolder folder("debian");
  testing::write_file_bytes(folder.file("deb_dists_main_binary-amd64_Packages"),
                            "Package: a\nDescription: first\n\nPackage: b\nDescription: second\n");
  const auto run = testing::run_psgrad("data debian-packages --lists " + folder.path.string() + " --out " +
                                       folder.file("out.jsonl"));
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(testing::line_count(run.output) == 1);
  CHECK(contains(run.output, "the package lists hold no packages with a Section (2 stanzas without one and 0 "
                             "repeated names skipped)"));
  CHECK_FALSE(std::filesystem::exists(folder.file("out.jsonl")));
}

TEST_CASE("psgrad data click-logs writes the rows asked for, the same for the same seed") {
  testing::TempFolder folder("clicks");
  const auto first = folder.file("a.jsonl");
  const auto second = folder.file("b.jsonl");
  auto run = testing::run_psgrad("data click-logs --rows 500 --seed 4 --out " + first);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.output, "wrote 500 rows to " + first));
  REQUIRE(testing::run_psgrad("data click-logs --rows 500 --seed 4 --out " + second).exit_code == 0);
  const auto bytes = testing::read_file_bytes(first);
  CHECK(bytes == testing::read_file_bytes(second));
  CHECK(testing::line_count(bytes) == 500);
  run = testing::run_psgrad("data click-logs --rows 0 --out " + first);
  CHECK(run.exit_code == 2);
  CHECK(contains(run.output, "expected a whole number from 1 to"));
}
