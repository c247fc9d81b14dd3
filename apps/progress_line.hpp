// The live progress line on a terminal: one line on stderr, rewritten in place at each evaluation.
#pragma once

#include <cstdio>
#include <string>

#include "payloads/messages.hpp"

namespace psgrad {

// "iteration 120/200 (60%) | 5230 samples/s | dev acc 0.912 | ETA 0.6s"; async and ssp runs count
// gradients instead ("gradients 240/400 (60%)") and add " | staleness 1.2 mean, 3 max". Parts are
// left out, least useful first, until the text fits in width - 1 columns (a line that reached the last
// column would wrap on some terminals and leave its tail behind); at worst it is cut.
std::string progress_text(const EvaluationReport& report, bool shows_staleness, std::size_t width = 80);

// The terminal's width in columns (stderr's, else $COLUMNS, else 80).
std::size_t terminal_width();

// "0.6s", "1m05s", "2h03m".
std::string duration_text(double seconds);

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* terminal) : terminal_(terminal) {}
  // Replaces the line's text.
  void show(const std::string& text);
  // Erases the line, so other output starts at column 0 on a clean line.
  void clear();

 private:
  std::FILE* terminal_;
  bool shown_ = false;
};

// Whether stdout and stderr are both terminals: only then is a line rewritten with \r readable.
bool output_is_terminal();

}  // namespace psgrad
