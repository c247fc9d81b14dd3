#include "io/chrome_trace.hpp"

#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "io/atomic_file.hpp"

namespace psgrad {

std::string chrome_trace_json(const std::vector<ChromeTraceEvent>& events) {
  using json = nlohmann::ordered_json;
  json trace_events = json::array();
  std::map<std::uint32_t, std::string> processes;
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> threads;  // -> tid
  std::map<std::uint32_t, std::uint32_t> threads_in_process;
  // pid 0 is reserved by some viewers; numbers start at 1.
  const auto pid_of = [](std::uint32_t process) { return process + 1; };
  for (const auto& e : events) {
    processes.emplace(e.process, e.process_name);
    const auto key = std::make_pair(e.process, e.thread);
    if (!threads.count(key)) threads[key] = ++threads_in_process[e.process];
    trace_events.push_back(json{{"name", e.name},
                                {"cat", e.thread},
                                {"ph", "X"},
                                {"ts", e.start_us},
                                {"dur", e.duration_us},
                                {"pid", pid_of(e.process)},
                                {"tid", threads[key]},
                                {"args", json{{"step", e.step}}}});
  }
  for (const auto& [process, name] : processes) {
    trace_events.push_back(json{{"name", "process_name"}, {"ph", "M"}, {"pid", pid_of(process)}, {"tid", 0},
                                {"args", json{{"name", name}}}});
    trace_events.push_back(json{{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid_of(process)}, {"tid", 0},
                                {"args", json{{"sort_index", process}}}});
  }
  for (const auto& [key, tid] : threads) {
    trace_events.push_back(json{{"name", "thread_name"}, {"ph", "M"}, {"pid", pid_of(key.first)}, {"tid", tid},
                                {"args", json{{"name", key.second}}}});
    trace_events.push_back(json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", pid_of(key.first)},
                                {"tid", tid}, {"args", json{{"sort_index", tid}}}});
  }
  return json{{"traceEvents", std::move(trace_events)}, {"displayTimeUnit", "ms"}}.dump(
      -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status write_chrome_trace(const std::string& path, const std::vector<ChromeTraceEvent>& events) {
  return write_file_atomically(path, "trace file", chrome_trace_json(events));
}

}  // namespace psgrad
