// Writes a timeline as a Chrome trace: the JSON that chrome://tracing and Perfetto (ui.perfetto.dev) open.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

// One complete event ("ph": "X"). Processes and threads are named rows; times are microseconds.
struct ChromeTraceEvent {
  std::uint32_t process = 0;  // rows sort by this number
  std::string process_name;
  std::string thread;         // rows within a process sort by first appearance
  std::string name;
  double start_us = 0.0;
  double duration_us = 0.0;
  std::uint64_t step = 0;     // shown as the event's argument
};

// {"traceEvents": [...], "displayTimeUnit": "ms"}: the events plus process and thread name records.
std::string chrome_trace_json(const std::vector<ChromeTraceEvent>& events);
// Replaces path whole (temporary file, fsync, rename); errors are one line naming the file.
Status write_chrome_trace(const std::string& path, const std::vector<ChromeTraceEvent>& events);

}  // namespace psgrad
