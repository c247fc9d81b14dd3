// A checked file read one line at a time through a buffer that holds at most one line: memory stays
// bounded by the longest line allowed, whatever the file's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/bounded_file.hpp"
#include "model/result.hpp"

namespace psgrad {

class LineReader {
 public:
  // Opens through open_checked_file (a regular file of at most max_bytes). `what` names the file in
  // errors ("CSV file"); `line_meaning` says why a line may be no longer than max_line_bytes.
  static Result<LineReader> open(const std::string& path, const std::string& what, std::uint64_t max_bytes,
                                 std::size_t max_line_bytes, std::string line_meaning);

  // The next line with its '\n' (the file's last line may lack one), valid until the next call; nothing
  // at the end of the file. A line longer than the bound is refused as soon as that many bytes are
  // read, as "<path>:<line>: ...".
  Result<std::optional<std::string_view>> next();
  // The line number of the line next() returned last, from 1.
  std::uint64_t line() const { return line_; }
  std::uint64_t file_size() const { return file_.size(); }

 private:
  LineReader(CheckedFile file, std::string path, std::string what, std::size_t max_line_bytes,
             std::string line_meaning);
  // Appends what the file holds next; false at its end.
  Result<bool> fill();

  CheckedFile file_;
  std::string path_, what_, line_meaning_;
  std::size_t max_line_bytes_;
  std::string buffer_;
  std::size_t begin_ = 0;  // where the next line starts in buffer_
  std::uint64_t line_ = 0;
  std::uint64_t read_ = 0;  // bytes read so far, against a file that grows while read
  std::uint64_t max_bytes_ = 0;
  bool at_end_ = false;
};

}  // namespace psgrad
