// CPU use on a shared machine: this process's against everything else's, so a figure taken while
// other work held a core can be recognized (and the harness can wait for a quiet moment first).
#pragma once

namespace psgrad::bench {

// User + system CPU seconds of this process (all threads), plus its reaped children's.
double own_cpu_seconds();
// CPU seconds every process on the machine has used since boot (/proc/stat, all cores).
double machine_busy_seconds();

// Cores in use over an interval: by this process (and its children) and by everything else.
class CpuMeter {
 public:
  CpuMeter();
  double own_cores() const;
  double other_cores() const;

 private:
  double start_wall_, start_own_, start_machine_;
};

// Waits, up to max_seconds, for a moment when other processes use less than threshold_cores.
// Returns the seconds waited; a machine that never quiets down is measured anyway.
double wait_for_quiet_machine(double max_seconds, double threshold_cores = 0.3);

}  // namespace psgrad::bench
