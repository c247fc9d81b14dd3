// The live progress line on a terminal: one line on stderr, rewritten in place at each evaluation.
#pragma once

#include <cstdio>
#include <string>

#include "actors/messages.hpp"

namespace psgrad {

// "iteration 120/200 (60%) | 5230 samples/s | dev acc 0.912 | ETA 0.6s", and with shows_staleness
// (async and ssp runs) " | staleness 1.2 mean, 3 max".
std::string progress_text(const EvaluationReport& report, bool shows_staleness);

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
