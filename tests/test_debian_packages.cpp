// Tests for apt's package lists: lz4 frames decompressed piece by piece, the Packages stanzas as records
// (section without area, summary, dependency names, name parts), the first list winning a name, and
// one-line refusals of damaged input.
#include <doctest/doctest.h>

#include <lz4frame.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/debian_packages.hpp"
#include "io/lz4_file.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One lz4 frame of `text`, as `lz4` and apt write them (blocks linked, 64 KiB each: several for the
// longer texts, so the decoder is fed across blocks).
std::string lz4_frame(const std::string& text) {
  LZ4F_preferences_t preferences{};
  preferences.frameInfo.blockSizeID = LZ4F_max64KB;
  preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  std::string frame(LZ4F_compressFrameBound(text.size(), &preferences), '\0');
  const auto size = LZ4F_compressFrame(frame.data(), frame.size(), text.data(), text.size(), &preferences);
  REQUIRE_FALSE(LZ4F_isError(size));
  frame.resize(size);
  return frame;
}

Result<std::string> read_back(const std::string& path, std::uint64_t max_bytes = 1u << 30) {
  std::string bytes;
  auto read = read_lz4_or_plain(path, "test file", 1u << 30, max_bytes, [&](std::string_view piece) {
    bytes.append(piece);
    return success();
  });
  if (!read) return Error{read.error()};
  return bytes;
}

const std::string kPackages =
    "Package: 0ad\n"
    "Version: 0.0.26-3\n"
    "Maintainer: Debian Games Team <pkg-games-devel@lists.alioth.debian.org>\n"
    "Depends: 0ad-data (>= 0.0.26), 0ad-data (<= 0.0.26-3), fonts-dejavu-core | ttf-dejavu-core,\n"
    " python3:any, libc6 (>= 2.34) [amd64]\n"
    "Description: Real-time strategy game of ancient warfare\n"
    " A longer description that is not the summary.\n"
    "Tag: game::strategy,\n"
    " x11::application\n"
    "Section: contrib/games\n"
    "\n"
    "Package: libstdc++6\n"
    "Maintainer: Debian GCC Maintainers <debian-gcc@lists.debian.org>\n"
    "Description: GNU Standard C++ Library v3\n"
    "Section: libs\n"
    "\n"
    "Package: no-section\n"
    "Description: skipped\n";

struct Lists {
  testing::TempFolder folder{"packages"};
  std::vector<PackageRecord> records;
  Result<PackageCounts> read(const std::vector<std::string>& lists) {
    return read_package_lists(lists, [this](const PackageRecord& record) {
      records.push_back(record);
      return success();
    });
  }
};

}  // namespace

TEST_CASE("an lz4 file reads back as the bytes it holds, and a plain file as it is") {
  testing::TempFolder folder("lz4");
  std::string text;
  for (int i = 0; i < 40000; ++i) text += "Package: p" + std::to_string(i) + "\n";  // several 64 KiB blocks
  const auto packed = folder.file("list.lz4");
  testing::write_file_bytes(packed, lz4_frame(text) + lz4_frame("two frames\n"));
  auto bytes = read_back(packed);
  REQUIRE_MESSAGE(bytes.ok(), (bytes.ok() ? "" : bytes.error()));
  CHECK(*bytes == text + "two frames\n");
  const auto plain = folder.file("list");
  testing::write_file_bytes(plain, text);
  CHECK(read_back(plain).value() == text);
}

TEST_CASE("a cut or damaged lz4 file, or one that decompresses past the bound, is refused in one line") {
  testing::TempFolder folder("lz4");
  const std::string text(200000, 'x');
  const auto frame = lz4_frame(text);
  const auto cut = folder.file("cut.lz4");
  testing::write_file_bytes(cut, frame.substr(0, frame.size() - 10));
  auto bytes = read_back(cut);
  REQUIRE_FALSE(bytes.ok());
  CHECK(contains(bytes.error(), cut + ": "));
  CHECK(bytes.error().find('\n') == std::string::npos);
  const auto damaged = folder.file("damaged.lz4");
  std::string broken = frame;
  broken[broken.size() / 2] ^= 0x55;
  broken[broken.size() / 2 + 1] ^= 0x55;
  testing::write_file_bytes(damaged, broken);
  bytes = read_back(damaged);
  REQUIRE_FALSE(bytes.ok());
  CHECK(contains(bytes.error(), damaged + ": not a valid lz4 file"));
  const auto large = folder.file("large.lz4");
  testing::write_file_bytes(large, frame);
  bytes = read_back(large, 100000);
  REQUIRE_FALSE(bytes.ok());
  CHECK(contains(bytes.error(), "more than any test file"));
}

TEST_CASE("a Packages stanza becomes a record: section without area, summary, dependency names, name parts") {
  Lists lists;
  const auto path = lists.folder.file("x_Packages.lz4");
  testing::write_file_bytes(path, lz4_frame(kPackages));
  auto counts = lists.read({path});
  REQUIRE_MESSAGE(counts.ok(), (counts.ok() ? "" : counts.error()));
  CHECK(counts->packages == 2);
  CHECK(counts->unsectioned == 1);
  CHECK(counts->sections == std::map<std::string, std::uint64_t>{{"games", 1}, {"libs", 1}});
  REQUIRE(lists.records.size() == 2);
  const auto& game = lists.records[0];
  CHECK(game.name == "0ad");
  CHECK(game.section == "games");
  CHECK(game.summary == "Real-time strategy game of ancient warfare");
  CHECK(game.depends ==
        std::vector<std::string>{"0ad-data", "fonts-dejavu-core", "ttf-dejavu-core", "python3", "libc6"});
  CHECK(game.maintainer == "Debian Games Team <pkg-games-devel@lists.alioth.debian.org>");
  CHECK(game.name_parts == std::vector<std::string>{"0ad"});
  CHECK(lists.records[1].name_parts == std::vector<std::string>{"libstdc", "6"});
  CHECK(lists.records[1].depends.empty());
}

TEST_CASE("a section with no name after its area names no class: the stanza counts as unsectioned") {
  Lists lists;
  const auto path = lists.folder.file("y_Packages");
  testing::write_file_bytes(path, "Package: a\nSection: contrib/games/\n\nPackage: b\nSection: /\n\n"
                                  "Package: c\nSection: libs\n\n");
  auto counts = lists.read({path});
  REQUIRE_MESSAGE(counts.ok(), (counts.ok() ? "" : counts.error()));
  CHECK(counts->packages == 1);
  CHECK(counts->unsectioned == 2);
  REQUIRE(lists.records.size() == 1);
  CHECK(lists.records[0].section == "libs");
}

TEST_CASE("a record is one JSON line of the fields a named-column config reads") {
  PackageRecord record{"g++-12", "devel", "GNU C++ compiler \"quoted\"", {"gcc-12", "libc6"}, "A <a@b>", {"g", "12"}};
  const auto line = package_json_line(record);
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  const auto json = nlohmann::json::parse(line);
  CHECK(json.at("name") == "g++-12");
  CHECK(json.at("section") == "devel");
  CHECK(json.at("summary") == "GNU C++ compiler \"quoted\"");
  CHECK(json.at("depends") == nlohmann::json::array({"gcc-12", "libc6"}));
  CHECK(json.at("maintainer") == "A <a@b>");
  CHECK(json.at("name_parts") == nlohmann::json::array({"g", "12"}));
  CHECK(package_name_parts("a.b+c--d") == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(section_label("non-free/libs") == "libs");
}

TEST_CASE("the first list to name a package wins, and lists are found in name order") {
  Lists lists;
  testing::write_file_bytes(lists.folder.file("b_Packages"), "Package: same\nSection: second\n");
  testing::write_file_bytes(lists.folder.file("a_Packages.lz4"), lz4_frame("Package: same\nSection: first\n"));
  testing::write_file_bytes(lists.folder.file("a_InRelease"), "not a list\n");
  auto found = find_package_lists(lists.folder.path.string());
  REQUIRE(found.ok());
  REQUIRE(found->size() == 2);
  auto counts = lists.read(*found);
  REQUIRE(counts.ok());
  CHECK(counts->packages == 1);
  CHECK(counts->duplicates == 1);
  REQUIRE(lists.records.size() == 1);
  CHECK(lists.records[0].section == "first");
}

TEST_CASE("a folder without lists and a file that is no package list are refused in one line") {
  testing::TempFolder folder("packages");
  auto found = find_package_lists(folder.path.string());
  REQUIRE_FALSE(found.ok());
  CHECK(contains(found.error(), "holds no package list (a file named *_Packages or *_Packages.lz4"));
  Lists lists;
  const auto path = lists.folder.file("x_Packages");
  testing::write_file_bytes(path, "Package: a\nSection: b\n\nthis is not a field\n");
  auto counts = lists.read({path});
  REQUIRE_FALSE(counts.ok());
  CHECK(contains(counts.error(), path + ":4: expected \"Field: value\""));
  testing::write_file_bytes(path, "Section: b\n");
  counts = lists.read({path});
  REQUIRE_FALSE(counts.ok());
  CHECK(contains(counts.error(), path + ":1: a stanza without a Package field"));
}

TEST_CASE("every line is held to the limit, also one that arrives whole within a read") {
  Lists lists;
  const auto path = lists.folder.file("long_Packages");
  // 1.5 MB in one line, then a newline and a stanza: the reader gets it whole in one piece.
  testing::write_file_bytes(path, "Package: a\nSection: b\nTag: " + std::string(1'500'000, 'x') + "\n\nPackage: c\n");
  auto counts = lists.read({path});
  REQUIRE_FALSE(counts.ok());
  CHECK(contains(counts.error(), path + ":3: a line of more than 1048576 bytes"));
}

TEST_CASE("a record field written twice in one stanza is refused naming both lines") {
  Lists lists;
  const auto path = lists.folder.file("twice_Packages");
  testing::write_file_bytes(path, "Package: a\nSection: libs\nVersion: 1\nSection: games\n");
  auto counts = lists.read({path});
  REQUIRE_FALSE(counts.ok());
  CHECK(contains(counts.error(), path + ":4: Section written twice in one stanza (first on line 2)"));
}

// Base 36: the shortest names, so that the most dependencies fit the 1 MiB a Depends field may hold.
std::string short_name(int i) {
  std::string name;
  do {
    name.insert(name.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[i % 36]);
    i /= 36;
  } while (i > 0);
  return name;
}

TEST_CASE("a package with as many Depends as a field holds (160000) keeps every name once, in order") {
  // Names were kept unique by searching all the ones before each, quadratic in their number. Some names
  // are listed twice, as `a | b` alternatives often repeat one.
  Lists lists;
  const auto path = lists.folder.file("many_Packages");
  std::string depends = "Package: many\nSection: libs\nDepends: ";
  for (int i = 0; i < 160000; ++i) depends += (i ? (i % 10000 == 0 ? ",\n " : ", ") : "") + short_name(i % 150000);
  testing::write_file_bytes(path, depends + "\n");
  auto counts = lists.read({path});
  REQUIRE_MESSAGE(counts.ok(), counts.error());
  REQUIRE(lists.records.size() == 1);
  CHECK(lists.records.front().depends.size() == 150000);
  CHECK(lists.records.front().depends[149999] == short_name(149999));
}

TEST_CASE("a folder entry named like a package list that is no regular file is refused, not skipped") {
  testing::TempFolder folder("packages");
  testing::write_file_bytes((folder.path / "a_Packages").string(), "Package: a\nSection: b\n");
  std::filesystem::create_directory(folder.path / "b_Packages");
  auto found = find_package_lists(folder.path.string());
  REQUIRE_FALSE(found.ok());
  CHECK(contains(found.error(), "b_Packages: named like a package list, but is not a regular file"));
}
