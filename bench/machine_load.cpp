// /proc/stat counts in clock ticks for all cores together; getrusage gives this process's share.
#include "bench/machine_load.hpp"

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include "bench/statistics.hpp"

namespace psgrad::bench {

namespace {

double wall_seconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); }

}  // namespace

double own_cpu_seconds() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return seconds(self.ru_utime) + seconds(self.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime);
}

double machine_busy_seconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  if (!(stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq)) return 0.0;
  return static_cast<double>(user + nice + system + irq + softirq) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

CpuMeter::CpuMeter()
    : start_wall_(wall_seconds()), start_own_(own_cpu_seconds()), start_machine_(machine_busy_seconds()) {}

double CpuMeter::own_cores() const {
  const double wall = wall_seconds() - start_wall_;
  return wall > 0.0 ? (own_cpu_seconds() - start_own_) / wall : 0.0;
}

double CpuMeter::other_cores() const {
  const double wall = wall_seconds() - start_wall_;
  if (wall <= 0.0) return 0.0;
  const double others = (machine_busy_seconds() - start_machine_) - (own_cpu_seconds() - start_own_);
  return others > 0.0 ? others / wall : 0.0;
}

double wait_for_quiet_machine(double max_seconds, double threshold_cores) {
  const auto start = Clock::now();
  while (seconds_since(start) < max_seconds) {
    CpuMeter meter;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (meter.other_cores() < threshold_cores) break;
  }
  return seconds_since(start);
}

}  // namespace psgrad::bench
