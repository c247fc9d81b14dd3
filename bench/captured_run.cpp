// A ChildProcess with its output piped and wait4 rather than popen: popen's pclose hides the child's
// rusage, and wait4 is the one place the kernel reports the peak RSS of processes that have already exited.
#include "bench/captured_run.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <mutex>
#include <sstream>
#include <thread>

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "apps/child_process.hpp"
#include "bench/statistics.hpp"

namespace psgrad::bench {

namespace {

long read_vm_hwm_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return 0;  // gone, or a zombie (which has no memory left to report)
}

// Children of every thread of pid: psgrad starts its workers from an actor thread, and the kernel
// lists children per thread.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code ec;
  const auto tasks = std::filesystem::path("/proc") / std::to_string(pid) / "task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream list(task.path() / "children");
    pid_t child = 0;
    while (list >> child) children.push_back(child);
  }
  return children;
}

// Samples the process tree's VmHWM until stopped; VmHWM only grows, so the last reading before a
// process exits is within one polling interval of its true peak.
class PeakWatcher {
 public:
  explicit PeakWatcher(pid_t root) : root_(root), thread_([this] { watch(); }) {}
  ~PeakWatcher() { stop(); }

  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<ProcessPeak> peaks() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<ProcessPeak> result;
    for (const auto& [pid, peak] : peaks_) result.push_back(peak);
    return result;
  }

 private:
  void record(pid_t pid, bool is_descendant) {
    const long kb = read_vm_hwm_kb(pid);
    std::lock_guard<std::mutex> lock(mutex_);
    auto& peak = peaks_[pid];
    peak.pid = pid;
    peak.is_descendant = is_descendant;
    peak.vm_hwm_kb = std::max(peak.vm_hwm_kb, kb);
  }
  void watch() {
    while (running_) {
      record(root_, false);
      for (pid_t child : children_of(root_)) record(child, true);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  pid_t root_;
  std::atomic<bool> running_{true};
  std::mutex mutex_;
  std::map<pid_t, ProcessPeak> peaks_;
  std::thread thread_;
};

// For processes that are not our children (workers of the program): alive unless gone or a zombie.
bool has_not_exited(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, name, state;
  if (!(stat >> pid_text >> name >> state)) return false;
  return state != "Z" && state != "X";
}

}  // namespace

ChildRun run_captured(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  ChildRun run;
  ChildSpec spec;
  spec.command = argv;
  spec.streams = ChildStreams::output_piped;
  // In the bench's own process group, with its signal handling: as a shell would run it.
  spec.own_process_group = false;
  const auto start = Clock::now();
  auto child = ChildProcess::start(spec);
  if (!child) {
    run.output = child.error();
    return run;
  }
  run.started = true;
  const pid_t pid = child->pid();
  const int output = child->output_fd();

  PeakWatcher watcher(pid);
  // The pipe alone cannot tell when to stop: a worker that outlives its server keeps the write end
  // open. So the program's own exit (seen without reaping it) ends the read, after a short drain.
  std::optional<Clock::time_point> exited_at;
  bool killed = false;
  char buffer[4096];
  while (true) {
    pollfd readable{output, POLLIN, 0};
    if (poll(&readable, 1, 100) > 0) {
      const ssize_t got = read(output, buffer, sizeof buffer);
      if (got > 0) {
        run.output.append(buffer, static_cast<std::size_t>(got));
        continue;
      }
      if (got == 0) break;  // every writer has closed it
      if (errno != EINTR) break;
    }
    if (!exited_at && child->has_exited()) exited_at = Clock::now();
    if (exited_at && seconds_since(*exited_at) > 2.0) break;
    if (!killed && seconds_since(start) > static_cast<double>(timeout.count())) {
      run.timed_out = killed = true;
      child->signal(SIGTERM);  // only the process this function started
    }
  }
  child->close_output();

  rusage usage{};
  child->wait(&usage);
  run.seconds = seconds_since(start);
  watcher.stop();
  run.peaks = watcher.peaks();
  run.tree_max_rss_kb = usage.ru_maxrss;
  run.signal = child->end_signal();
  if (run.signal == 0) run.exit_code = child->exit_code();
  // Workers the program started but left running would skew every later measurement: end them by
  // the pids the watcher saw, and say so.
  for (const auto& peak : run.peaks) {
    if (peak.is_descendant && has_not_exited(peak.pid)) {
      kill(peak.pid, SIGTERM);
      run.output += "\n[psgrad_bench: ended leftover process " + std::to_string(peak.pid) + "]\n";
      ++run.leftover_processes;
    }
  }
  return run;
}

}  // namespace psgrad::bench
