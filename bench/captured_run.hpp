// Runs a program with its output captured through a pipe, and records the peak memory of it and of
// the processes it starts (the multi-process run's worker processes).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

namespace psgrad::bench {

struct ProcessPeak {
  pid_t pid = 0;
  bool is_descendant = false;  // false: the program itself
  long vm_hwm_kb = 0;          // the last VmHWM read from /proc/<pid>/status before it exited
};

struct ChildRun {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;  // -1: killed by a signal or not started
  int signal = 0;      // the signal that ended it, if one did
  int leftover_processes = 0;  // descendants still running after it exited (ended by the harness)
  std::string output;  // stdout and stderr, interleaved
  // wait4's ru_maxrss: the largest peak RSS among the program and every descendant it waited for,
  // but also of the image it was spawned from (exec keeps that high-water mark): an upper bound.
  long tree_max_rss_kb = 0;
  std::vector<ProcessPeak> peaks;
  double seconds = 0.0;
};

// argv[0] is the path to run. The program is sent SIGTERM (by its pid) once timeout has passed.
ChildRun run_captured(const std::vector<std::string>& argv, std::chrono::seconds timeout);

}  // namespace psgrad::bench
