// Adds up what each kind of process holds, by the settings that size it.
#include "io/resource_estimate.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "io/machine_memory.hpp"
#include "io/model_shape.hpp"

namespace psgrad {

namespace {

constexpr double kFloatBytes = 4;
// A psgrad process before it holds any data or model: code, CAF's actor system and the middleman
// (about 20 MiB measured for a 1-worker run less its data set and model).
constexpr double kProcessBytes = 24.0 * 1024 * 1024;
// One thread's stack pages and CAF's per-thread state: 255 extra scheduler threads added 2.3 MiB to
// a run's peak RSS (about 9 KiB each); a generous 64 KiB leaves room for deeper stacks.
constexpr double kThreadBytes = 64.0 * 1024;
// Threads CAF starts besides the scheduler (middleman, timer, printer, ...).
constexpr double kSystemThreads = 4;

double scheduler_threads(const Config& config) {
  if (config.cluster.threads > 0) return static_cast<double>(config.cluster.threads);
  return std::max(1u, std::thread::hardware_concurrency());
}

// Buffers the optimizer keeps per parameter: Adam's and RAdam's two moments, none for SGD, and the
// average when asked for; an optimizer registered elsewhere is assumed to keep as many as Adam with averages.
double optimizer_copies(const Config& config) {
  const auto averages = config.optimizer.settings.find("use_averages");
  const bool with_averages = averages != config.optimizer.settings.end() &&
                             std::holds_alternative<bool>(averages->second) && std::get<bool>(averages->second);
  const double average = with_averages ? 1 : 0;
  if (config.optimizer.name == "SGD.v1") return average;
  if (config.optimizer.name == "Adam.v1" || config.optimizer.name == "RAdam.v1") return 2 + average;
  return 3;
}

// Parameter-sized buffers a server (or a shard process) holds: the model built to draw the initial
// weights (weights and gradients), the state's weights, the optimizer's buffers, a pool with one
// snapshot per worker holding one plus two, every worker's gradient in flight, the shards' slices,
// and a checkpoint's copy of weights and optimizer state with its serialised bytes.
double server_copies(const Config& config, double workers) {
  double copies = 2 + 1 + optimizer_copies(config) + (workers + 2) + workers;
  if (config.cluster.servers > 1) copies += 1;
  if (!config.training.checkpoint_path.empty()) copies += 2 * (1 + optimizer_copies(config));
  return copies;
}

// A worker's model (weights and gradients) and its pool of gradient buffers (one in flight, one
// being filled); a worker in its own process also holds the weights it received.
double worker_copies(bool own_process) { return own_process ? 5 : 4; }

// One loaded copy of the data: float inputs and one-hot targets, labels, and the pixel bytes of the
// larger split while it is converted.
double data_bytes(const DataShape& data) {
  const double examples = static_cast<double>(data.train_count) + static_cast<double>(data.dev_count);
  const double per_example = (static_cast<double>(data.width) + static_cast<double>(data.classes)) * kFloatBytes + 1;
  return examples * per_example +
         static_cast<double>(std::max(data.train_count, data.dev_count)) * static_cast<double>(data.width);
}

struct Placement {
  double processes = 1;
  double worker_processes = 0;  // workers with a process of their own
  double workers_here = 0;      // workers on this machine, in any process
  bool server = false;
  bool evaluator = false;
  double data_copies = 1;
  double threads = 0;
};

Placement placement_of(const Config& config, ProcessRole role) {
  const double workers = static_cast<double>(config.cluster.num_workers);
  const double scheduler = scheduler_threads(config);
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  Placement p;
  switch (role) {
    case ProcessRole::whole_run:
      p.workers_here = workers;
      p.server = p.evaluator = true;
      p.threads = scheduler + workers + 1 + kSystemThreads;  // workers and evaluator are detached
      break;
    case ProcessRole::server:
      p.server = p.evaluator = true;
      p.threads = scheduler + 1 + kSystemThreads;
      break;
    case ProcessRole::server_and_worker_processes:
      p.processes = 1 + workers;
      p.worker_processes = p.workers_here = workers;
      p.server = p.evaluator = true;
      p.data_copies = 1 + workers;
      p.threads = scheduler + 1 + kSystemThreads + workers * (cores + kSystemThreads);
      break;
    case ProcessRole::worker:
      p.worker_processes = p.workers_here = 1;
      p.threads = cores + kSystemThreads;
      break;
    case ProcessRole::shard:
      p.server = true;
      p.data_copies = 0;
      p.threads = cores + kSystemThreads;
      break;
  }
  return p;
}

}  // namespace

double MemoryEstimate::total_bytes() const {
  double total = 0;
  for (const auto& part : parts) total += part.bytes;
  return total;
}

const MemoryPart& MemoryEstimate::largest() const {
  return *std::max_element(parts.begin(), parts.end(),
                           [](const MemoryPart& a, const MemoryPart& b) { return a.bytes < b.bytes; });
}

Result<MemoryEstimate> estimate_memory(const Config& config, const DataShape& data, ProcessRole role) {
  auto shape = model_shape(config.model, data.width, data.classes);
  if (!shape) return Error{fmt::format("{}: {}", config.source, shape.error())};
  const auto p = placement_of(config, role);
  const double workers = static_cast<double>(config.cluster.num_workers);
  const double parameters = static_cast<double>(shape->parameters);
  const double per_row = static_cast<double>(shape->activation_floats_per_row);
  const double batch = static_cast<double>(config.training.batch_size);
  const double train_count = static_cast<double>(data.train_count);

  double copies = (p.server ? server_copies(config, workers) : 0) + (p.evaluator ? 2 : 0) +
                  (p.workers_here - p.worker_processes) * worker_copies(false) +
                  p.worker_processes * worker_copies(true);
  MemoryEstimate estimate;
  estimate.parts.push_back(
      {fmt::format("the model's {} parameters, held {:.0f} times (weights, gradients, optimizer moments, "
                   "worker copies and buffer pools)",
                   shape->parameters, copies),
       parameters * copies * kFloatBytes});
  if (p.workers_here > 0) {
    // A worker sizes its layers for the full batch; its minibatch holds at most the whole data set.
    const double minibatch_rows = data.train_count ? std::min(batch, train_count) : batch;
    const double minibatch_floats = minibatch_rows * static_cast<double>(data.width + data.classes);
    estimate.parts.push_back(
        {fmt::format("activation buffers: training.batch_size {} x {} floats per row, for {}",
                     config.training.batch_size, shape->activation_floats_per_row,
                     p.workers_here == 1 ? std::string("one worker") : fmt::format("{:.0f} workers", p.workers_here)),
         p.workers_here * ((batch * per_row + minibatch_floats) * kFloatBytes + train_count * 4)});
  }
  if (p.evaluator) {
    // Evaluation passes never hold more rows than the dev split has.
    const double eval_batch = static_cast<double>(config.evaluation.batch_size);
    const double rows = data.dev_count ? std::min(eval_batch, static_cast<double>(data.dev_count)) : eval_batch;
    estimate.parts.push_back({fmt::format("evaluation buffers: evaluation.batch_size {} x {} floats per row",
                                          config.evaluation.batch_size, shape->activation_floats_per_row),
                              rows * per_row * kFloatBytes});
  }
  if (p.data_copies > 0 && data.train_count + data.dev_count > 0)
    estimate.parts.push_back({fmt::format("the data set ({} + {} examples of {} inputs), loaded by {:.0f} "
                                          "process(es)",
                                          data.train_count, data.dev_count, data.width, p.data_copies),
                              p.data_copies * data_bytes(data)});
  estimate.parts.push_back({fmt::format("{:.0f} process(es) and {:.0f} threads (cluster.threads, one per "
                                        "worker)",
                                        p.processes, p.threads),
                            p.processes * kProcessBytes + p.threads * kThreadBytes});
  return estimate;
}

Status check_memory(const Config& config, const DataShape& data, ProcessRole role, std::uint64_t machine_bytes,
                    const std::string& holder) {
  auto estimate = estimate_memory(config, data, role);
  if (!estimate) return Error{estimate.error()};
  const double needed = estimate->total_bytes();
  if (needed <= static_cast<double>(machine_bytes)) return success();
  const auto& largest = estimate->largest();
  return Error{fmt::format("{}: needs {}; {} {}; {} of it for {}", config.source, memory_size_text(needed), holder,
                           memory_size_text(static_cast<double>(machine_bytes)),
                           memory_size_text(largest.bytes), largest.what)};
}

}  // namespace psgrad
