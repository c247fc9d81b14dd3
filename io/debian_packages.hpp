// apt's package lists (the Packages files `apt-get update` writes, lz4-compressed or not) as records
// for a classifier: a package's Section as its label, its summary, dependencies, maintainer and name
// parts as inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

struct PackageRecord {
  std::string name;
  std::string section;                  // without an area prefix: "contrib/games" is "games"
  std::string summary;                  // the Description's first line
  std::vector<std::string> depends;     // names in Depends, without versions; alternatives split; no repeats
  std::string maintainer;
  std::vector<std::string> name_parts;  // the name split on '-', '.' and '+', empty parts dropped
};

// Field values as the records hold them.
std::vector<std::string> dependency_names(std::string_view depends);
std::vector<std::string> package_name_parts(std::string_view name);
std::string section_label(std::string_view section);

// One JSON Lines record, with its '\n': {"name", "section", "summary", "depends", "maintainer", "name_parts"}.
std::string package_json_line(const PackageRecord& record);

// The Packages files of a folder: every regular file whose name ends in "_Packages" or "_Packages.lz4",
// in name order. Refuses a folder with none, saying what it looked for.
Result<std::vector<std::string>> find_package_lists(const std::string& folder);

struct PackageCounts {
  std::uint64_t packages = 0;     // records given
  std::uint64_t duplicates = 0;   // stanzas of a name an earlier one gave
  std::uint64_t unsectioned = 0;  // stanzas without a Section, skipped
  std::map<std::string, std::uint64_t> sections;  // packages per section given
};

// Reads the lists in order and gives `take` one record per package name: the first list to hold a name
// wins. Errors are one line naming the file and line; `take`'s error stops the reading.
Result<PackageCounts> read_package_lists(const std::vector<std::string>& lists,
                                         const std::function<Status(const PackageRecord&)>& take);

}  // namespace psgrad
