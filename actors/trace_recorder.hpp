// A run's timeline in memory (worker compute, wait and transfer, shard applies, evaluations), merged
// onto this process's clock, for a trace file the apps write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "payloads/messages.hpp"

namespace psgrad {

// One span on this process's steady clock (nanoseconds).
struct TraceSpan {
  std::uint32_t process = 0;  // 0: the server's process; k + 1: worker k
  std::string process_name;   // "server", "worker 1 on host-b (pid 4711)"
  std::string thread;         // a row within the process: "driver", "shard 0", "evaluator", "compute", "network"
  std::string name;           // "step", "apply", "evaluate", "compute", "wait", "prefetch", "weights in", ...
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t step = 0;     // the sync iteration or optimizer step it belongs to
};

// One compute request to a worker: sent and answered on this process's clock, what the worker did
// on its own clock.
struct WorkerExchange {
  std::uint32_t worker = 0;
  std::string worker_name;
  std::int64_t sent = 0;
  std::int64_t returned = 0;
  WorkTiming timing;
  std::uint64_t step = 0;
  bool used = true;  // false: a backup worker's gradient that came too late for its step
};

// Safe to use from several actors at once (the driver, the evaluator).
class TraceRecorder {
 public:
  // Beyond this many records new ones are counted, not kept: a trace of a very long run stays bounded.
  static constexpr std::size_t max_records = 2'000'000;

  void add(TraceSpan span);
  void add(WorkerExchange exchange);
  // One clock probe of worker k at join: our clock when asked and answered, the worker's in between.
  void add_clock_probe(std::uint32_t worker, std::int64_t sent, std::int64_t worker_time, std::int64_t returned);

  // Every span on this process's clock. Each worker's clock offset is estimated as NTP does, from the
  // clock probes taken when it joined (the one with the shortest round trip; the worker's time is taken
  // to lie in its middle), or from its exchanges when it has none; transfer spans are kept within their
  // exchange.
  std::vector<TraceSpan> spans() const;
  std::size_t dropped() const;
  // The clock probes taken, each as an exchange whose worker time is both received and answered.
  std::vector<WorkerExchange> clock_probes() const;
  // The compute requests recorded, in the order they came in.
  std::vector<WorkerExchange> exchanges() const;

 private:
  mutable std::mutex mutex_;
  std::vector<TraceSpan> spans_;
  std::vector<WorkerExchange> exchanges_;
  std::vector<WorkerExchange> probes_;  // clock probes at join, as exchanges without work
  std::size_t dropped_ = 0;
};

// How far worker k's clock is ahead of ours (nanoseconds), from its exchanges; 0 without any.
std::int64_t estimate_clock_offset(const std::vector<WorkerExchange>& exchanges);

}  // namespace psgrad
