// ru_maxrss is a high-water mark: read at the end it covers every section of the run.
#include "bench/memory_use.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <sys/resource.h>

namespace psgrad::bench {

long own_peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

void measure_memory_use(BenchContext& context, Report& report, long rss_after_loading_kb) {
  const char* section = "7 memory";
  const auto& train = *context.data.train;
  const auto& dev = *context.data.dev;
  const double data_bytes =
      static_cast<double>((train.inputs.size() + train.targets.size() + dev.inputs.size() + dev.targets.size()) *
                              sizeof(float) +
                          train.labels.size() + dev.labels.size());
  report.add({"memory.data_set_mb", section, "data set in memory (train + dev)", exact(data_bytes / 1048576.0), "MiB",
              fmt::format("{} + {} examples", train.count, dev.count)});

  // Every worker of a process gets its data through load_data_shared: loading it again, as each
  // worker's setup would, must hand back the very same buffers.
  bool shared = true;
  for (int worker = 0; worker < 4; ++worker) {
    auto again = load_data_shared("mnist", "", context.options.data_dir);
    if (!again) throw std::runtime_error(again.error());
    shared = shared && again->train.get() == context.data.train.get() && again->dev.get() == context.data.dev.get();
  }
  report.details("memory")["data_set_loaded_once_per_process"] = shared;
  report.add({"memory.data_set_shared", section, "load_data_shared x4 returns the same data", exact(shared ? 1 : 0),
              shared ? "yes" : "NO", "pointer equality"});

  report.add({"memory.rss_after_loading_mb", section, "this process: peak RSS after loading the data",
              exact(static_cast<double>(rss_after_loading_kb) / 1024.0), "MiB", "getrusage"});
  report.add({"memory.rss_peak_mb", section, "this process: peak RSS over all sections",
              exact(static_cast<double>(own_peak_rss_kb()) / 1024.0), "MiB", "up to 4 workers in-process"});
  const auto& tree = context.process_memory;
  if (!tree.measured) return;
  report.add({"memory.processes_server_mb", section, "multi-process run: server process peak",
              exact(static_cast<double>(tree.server_vm_hwm_kb) / 1024.0), "MiB", "VmHWM, polled /proc"});
  report.add({"memory.processes_worker_mb", section, "  largest worker process peak",
              exact(static_cast<double>(tree.worker_vm_hwm_kb) / 1024.0), "MiB",
              fmt::format("VmHWM, {} workers seen", tree.workers_seen)});
  // Linux keeps the spawning process's RSS high-water mark across exec (signal->maxrss), so for a
  // posix_spawned child wait4 reports max(this process's RSS at spawn, the child's own peak): an
  // upper bound only, kept for comparison with the polled figures.
  report.add({"memory.processes_wait4_max_mb", section, "  wait4 ru_maxrss (upper bound)",
              exact(static_cast<double>(tree.tree_max_rss_kb) / 1024.0), "MiB", "includes the spawner's RSS"});
}

}  // namespace psgrad::bench
