// The INI layer of a Thinc config, read as Python's configparser reads it for Thinc: sections, keys
// and the text of their values, with the line each was written on.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

struct IniEntry {
  std::string key;
  std::string text;  // lines of a multi-line value joined with '\n'
  int line = 0;
};

struct IniSection {
  std::string name;  // "optimizer.learn_rate"
  int line = 0;
  std::vector<IniEntry> entries;  // in file order

  const IniEntry* find(const std::string& key) const;
  IniEntry* find(const std::string& key);
  IniEntry& add(IniEntry entry);

 private:
  std::map<std::string, std::size_t> index_;
};

struct IniDocument {
  std::vector<IniSection> sections;  // in file order

  const IniSection* find(const std::string& name) const;
  IniSection* find(const std::string& name);
  IniSection& add(std::string name, int line);

 private:
  std::map<std::string, std::size_t> index_;
};

// configparser's rules: a [section] header, then `key = value` or `key: value` lines; a line starting
// with # or ; is a comment (there are no comments after a value); a line indented more than its key
// continues the value; keys keep their case; a section or a key written twice is an error, as is a
// value in [DEFAULT]. Errors: "<source>:<line>: <problem>".
Result<IniDocument> read_ini(const std::string& text, const std::string& source);

}  // namespace psgrad
