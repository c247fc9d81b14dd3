// Tests for .npz archives: numpy's stored and deflated files, round trips, and refusals in one line.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/npz_archive.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

std::string fixture(const std::string& name) { return std::string(PSGRAD_SOURCE_DIR) + "/tests/data/" + name; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool is_one_line(const std::string& text) { return text.find('\n') == std::string::npos; }

}  // namespace

TEST_CASE("an .npz written by numpy's savez_compressed yields its four arrays with their shapes and values") {
  auto archive = NpzArchive::open(fixture("numpy-savez-compressed.npz"));
  REQUIRE_MESSAGE(archive.ok(), (archive.ok() ? "" : archive.error()));
  for (const char* name : {"x_train", "y_train", "x_test", "y_test"}) CHECK(archive->has(name));
  auto x = archive->read("x_train");
  REQUIRE_MESSAGE(x.ok(), (x.ok() ? "" : x.error()));
  CHECK(x->shape == std::vector<std::uint64_t>{4, 2, 3});
  for (std::size_t i = 0; i < 24; ++i) CHECK(x->value(i) == static_cast<double>(i * 10));
  auto y = archive->read("y_train");
  REQUIRE(y.ok());
  CHECK(y->dtype == "<i8");
  CHECK(y->value(1) == 2.0);
  auto x_test = archive->read("x_test");
  REQUIRE(x_test.ok());
  CHECK(x_test->value(5) == 1.25);
}

TEST_CASE("an .npz written by numpy's savez (stored, zip64 entries) reads like a compressed one") {
  auto archive = NpzArchive::open(fixture("numpy-savez.npz"));
  REQUIRE_MESSAGE(archive.ok(), (archive.ok() ? "" : archive.error()));
  CHECK(archive->names().size() == 2);
  auto y = archive->read("y_train");
  REQUIRE(y.ok());
  CHECK(y->value(3) == 2.0);
  auto header = archive->read_header("x_train");
  REQUIRE(header.ok());
  CHECK(header->shape == std::vector<std::uint64_t>{4, 2, 3});
}

TEST_CASE("write_npz writes stored and deflated archives that read back the same arrays") {
  testing::TempFolder folder("npz");
  const std::vector<float> values{1.5f, -2.0f, 0.125f};
  for (const bool compressed : {false, true}) {
    CAPTURE(compressed);
    const auto path = folder.file(compressed ? "deflated.npz" : "stored.npz");
    REQUIRE(write_npz(path, {{"a", npy_array({3}, values)}, {"b", npy_array({1}, std::vector<std::uint8_t>{9})}},
                      compressed)
                .ok());
    auto archive = NpzArchive::open(path);
    REQUIRE(archive.ok());
    auto a = archive->read("a");
    REQUIRE(a.ok());
    for (std::size_t i = 0; i < values.size(); ++i) CHECK(a->value(i) == static_cast<double>(values[i]));
    CHECK(archive->read("b")->value(0) == 9.0);
  }
}

TEST_CASE("NpzArchive names the arrays an archive holds when one is missing") {
  auto archive = NpzArchive::open(fixture("numpy-savez.npz"));
  REQUIRE(archive.ok());
  auto missing = archive->read("x_test");
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.error(), "numpy-savez.npz: has no array \"x_test\" (it holds: x_train, y_train)"));
}

TEST_CASE("NpzArchive refuses a file that is not a zip archive and a member whose bytes were damaged") {
  testing::TempFolder folder("npz-bad");
  testing::write_file_bytes(folder.file("text.npz"), "label,x\n1,2\n");
  auto text = NpzArchive::open(folder.file("text.npz"));
  REQUIRE_FALSE(text.ok());
  CHECK(contains(text.error(), "text.npz: not a readable .npz (zip) archive"));
  CHECK(is_one_line(text.error()));

  // Flip one byte inside the stored x_train.npy member's elements: the CRC no longer matches.
  auto bytes = testing::read_file_bytes(fixture("numpy-savez.npz"));
  // The local header: 30 bytes, the name, an extra field whose length is stored just before the name.
  const auto name_at = bytes.find("x_train.npy");
  const std::size_t extra = static_cast<unsigned char>(bytes[name_at - 2]) | static_cast<unsigned char>(bytes[name_at - 1]) << 8;
  const auto at = name_at + std::string("x_train.npy").size() + extra + 128 + 5;
  REQUIRE(at < bytes.size());
  bytes[at] = static_cast<char>(bytes[at] ^ 0x40);
  testing::write_file_bytes(folder.file("flipped.npz"), bytes);
  auto flipped = NpzArchive::open(folder.file("flipped.npz"));
  REQUIRE(flipped.ok());
  auto x = flipped->read("x_train");
  REQUIRE_FALSE(x.ok());
  CHECK_MESSAGE(contains(x.error(), "flipped.npz: x_train.npy: corrupt member"), x.error());
  CHECK(is_one_line(x.error()));
}

TEST_CASE("NpzArchive refuses a character device before reading it") {
  auto archive = NpzArchive::open("/dev/zero");
  REQUIRE_FALSE(archive.ok());
  CHECK(contains(archive.error(), "/dev/zero: is a character device, not a .npz file"));
}
