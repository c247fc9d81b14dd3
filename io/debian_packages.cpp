// Packages files are RFC 822-style stanzas: "Field: value" lines, continuation lines that start with a
// blank, and a blank line between packages. Read piece by piece, a line at a time.
#include "io/debian_packages.hpp"

#include <algorithm>
#include <map>
#include <filesystem>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/lz4_file.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

namespace fs = std::filesystem;

// bookworm's main list is about 19 MB compressed and 90 MB plain; these leave room for many years.
constexpr std::uint64_t kMaxListFileBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxListBytes = std::uint64_t{4} << 30;
// The longest Depends line of bookworm is a few kilobytes.
constexpr std::size_t kMaxFieldBytes = std::size_t{1} << 20;

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

bool ends_with(const std::string& text, std::string_view end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// The fields a record needs, of the stanza being read.
struct Stanza {
  std::string package, section, description, depends, maintainer;
  bool any = false;
};

class ListReader {
 public:
  ListReader(std::string path, const std::function<Status(Stanza&)>& take) : path_(std::move(path)), take_(take) {}

  Status feed(std::string_view piece) {
    pending_.append(piece);
    std::size_t begin = 0;
    for (;;) {
      const auto newline = pending_.find('\n', begin);
      if (newline == std::string::npos) break;
      // Every line is held to the limit, also one that arrived whole inside a piece.
      if (newline - begin > kMaxFieldBytes)
        return Error{fmt::format("{}:{}: a line of more than {} bytes, more than any Packages file holds", path_,
                                 line_ + 1, kMaxFieldBytes)};
      if (auto read = line(std::string_view(pending_).substr(begin, newline - begin)); !read) return read;
      begin = newline + 1;
    }
    pending_.erase(0, begin);
    if (pending_.size() > kMaxFieldBytes)
      return Error{fmt::format("{}:{}: a line of more than {} bytes, more than any Packages file holds", path_,
                               line_ + 1, kMaxFieldBytes)};
    return success();
  }

  Status finish() {
    if (!pending_.empty()) {
      if (auto read = line(pending_); !read) return read;
    }
    return end_stanza();
  }

 private:
  Status line(std::string_view text) {
    ++line_;
    if (trimmed(text).empty()) return end_stanza();
    if (text[0] == ' ' || text[0] == '\t') {
      if (!field_) return fail(text, "a continuation line before any field");
      // Only Depends is read whole; the other fields keep their first line.
      if (field_ == &stanza_.depends) {
        stanza_.depends += ' ';
        stanza_.depends += trimmed(text);
        if (stanza_.depends.size() > kMaxFieldBytes) return fail(text, "a Depends field of more than 1 MiB");
      }
      return success();
    }
    const auto colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return fail(text, "expected \"Field: value\" or a continuation line that starts with a blank");
    const auto name = text.substr(0, colon);
    const std::string value(trimmed(text.substr(colon + 1)));
    stanza_.any = true;
    field_ = name == "Package"      ? &stanza_.package
             : name == "Section"    ? &stanza_.section
             : name == "Description" ? &stanza_.description
             : name == "Depends"    ? &stanza_.depends
             : name == "Maintainer" ? &stanza_.maintainer
                                    : &ignored_;
    // A field the records are made of, written twice in one stanza, is a damaged list: which would count?
    if (field_ != &ignored_) {
      const auto first = seen_.emplace(std::string(name), line_);
      if (!first.second)
        return fail(text, fmt::format("{} written twice in one stanza (first on line {})", name, first.first->second));
    }
    *field_ = value;
    if (!stanza_start_) stanza_start_ = line_;
    return success();
  }

  Status end_stanza() {
    field_ = nullptr;
    seen_.clear();
    if (!stanza_.any) return success();
    if (stanza_.package.empty())
      return Error{fmt::format("{}:{}: a stanza without a Package field; expected apt's package list", path_,
                               stanza_start_)};
    auto taken = take_(stanza_);
    stanza_ = Stanza{};
    stanza_start_ = 0;
    return taken;
  }

  Status fail(std::string_view text, const std::string& what) const {
    return Error{fmt::format("{}:{}: {} (got \"{}\")", path_, line_, what, echoed(text, 60))};
  }

  std::string path_;
  const std::function<Status(Stanza&)>& take_;
  std::string pending_;
  std::uint64_t line_ = 0;
  std::uint64_t stanza_start_ = 0;
  Stanza stanza_;
  std::string ignored_;
  std::string* field_ = nullptr;  // the field continuation lines belong to
  std::map<std::string, std::uint64_t> seen_;  // the stanza's record fields and their lines
};

// A name as Depends spells it, without version, architecture and profile: "libc6 (>= 2.34)",
// "python3:any", "foo [amd64]".
std::string_view bare_name(std::string_view entry) {
  entry = trimmed(entry);
  const auto end = entry.find_first_of(" \t(:[<");
  return entry.substr(0, end);
}

}  // namespace

std::vector<std::string> dependency_names(std::string_view depends) {
  std::unordered_set<std::string> seen;  // a set, not a search of names: 200,000 Depends stay linear
  std::vector<std::string> names;
  std::size_t at = 0;
  while (at <= depends.size()) {
    const auto end = std::min(depends.find_first_of(",|", at), depends.size());
    const auto name = bare_name(depends.substr(at, end - at));
    if (!name.empty() && seen.insert(std::string(name)).second) names.emplace_back(name);
    at = end + 1;
  }
  return names;
}

std::vector<std::string> package_name_parts(std::string_view name) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at <= name.size()) {
    const auto end = std::min(name.find_first_of("-.+", at), name.size());
    if (end > at) parts.emplace_back(name.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

std::string section_label(std::string_view section) {
  const auto slash = section.rfind('/');
  return std::string(slash == std::string_view::npos ? section : section.substr(slash + 1));
}

std::string package_json_line(const PackageRecord& record) {
  nlohmann::ordered_json line;
  line["name"] = record.name;
  line["section"] = record.section;
  line["summary"] = record.summary;
  line["depends"] = record.depends;
  line["maintainer"] = record.maintainer;
  line["name_parts"] = record.name_parts;
  // Invalid UTF-8 (a list is UTF-8, but a damaged one need not be) becomes U+FFFD rather than an error.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Result<std::vector<std::string>> find_package_lists(const std::string& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error))
    return Error{fmt::format("{}: {}", folder, fs::exists(folder, error) ? "is not a folder" : "not found")};
  std::vector<std::string> lists;
  for (fs::directory_iterator entry(folder, error), end; !error && entry != end; entry.increment(error)) {
    const auto name = entry->path().filename().string();
    if (!ends_with(name, "_Packages") && !ends_with(name, "_Packages.lz4")) continue;
    // Named as a list but no file (a folder, a FIFO, a link to a device or nowhere): said, not skipped.
    std::error_code kind;
    if (!fs::is_regular_file(entry->path(), kind))
      return Error{fmt::format("{}: named like a package list, but is not a regular file", entry->path().string())};
    lists.push_back(entry->path().string());
  }
  if (error) return Error{fmt::format("{}: cannot list its files: {}", folder, error.message())};
  if (lists.empty())
    return Error{fmt::format("{}: holds no package list (a file named *_Packages or *_Packages.lz4, as `apt-get "
                             "update` writes with lz4 or no compression)",
                             folder)};
  std::sort(lists.begin(), lists.end());
  return lists;
}

Result<PackageCounts> read_package_lists(const std::vector<std::string>& lists,
                                         const std::function<Status(const PackageRecord&)>& take) {
  PackageCounts counts;
  std::unordered_set<std::string> names;
  const std::function<Status(Stanza&)> record = [&](Stanza& stanza) -> Status {
    // A section without a name after its area ("contrib/games/", "/") names no class.
    auto section = section_label(stanza.section);
    if (section.empty()) {
      ++counts.unsectioned;
      return success();
    }
    if (!names.insert(stanza.package).second) {
      ++counts.duplicates;
      return success();
    }
    PackageRecord package;
    package.name_parts = package_name_parts(stanza.package);
    package.name = std::move(stanza.package);
    package.section = std::move(section);
    package.summary = std::move(stanza.description);
    package.depends = dependency_names(stanza.depends);
    package.maintainer = std::move(stanza.maintainer);
    ++counts.sections[package.section];
    ++counts.packages;
    return take(package);
  };
  for (const auto& path : lists) {
    ListReader reader(path, record);
    auto read = read_lz4_or_plain(path, "package list", kMaxListFileBytes, kMaxListBytes,
                                  [&](std::string_view piece) { return reader.feed(piece); });
    if (!read) return Error{read.error()};
    if (auto finished = reader.finish(); !finished) return Error{finished.error()};
  }
  return counts;
}

}  // namespace psgrad
