#include "apps/trace_output.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "io/chrome_trace.hpp"

namespace psgrad {

Status write_trace_file(const std::string& path, const TraceRecorder& trace) {
  const auto spans = trace.spans();
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const auto& span : spans) origin = std::min(origin, span.start_ns);
  std::vector<ChromeTraceEvent> events;
  events.reserve(spans.size());
  for (const auto& span : spans)
    events.push_back(ChromeTraceEvent{span.process, span.process_name, span.thread, span.name,
                                      static_cast<double>(span.start_ns - origin) / 1e3,
                                      static_cast<double>(span.end_ns - span.start_ns) / 1e3, span.step});
  if (trace.dropped() > 0)
    fmt::print(stderr, "psgrad: the trace kept its first {} records and dropped {} more\n",
               TraceRecorder::max_records, trace.dropped());
  return write_chrome_trace(path, events);
}

}  // namespace psgrad
