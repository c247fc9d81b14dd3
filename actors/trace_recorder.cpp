#include "actors/trace_recorder.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace psgrad {

namespace {

std::int64_t clamp_to(std::int64_t t, std::int64_t low, std::int64_t high) { return std::max(low, std::min(t, high)); }

// The spans of one exchange: on the worker's "compute" row its prefetch, wait and compute, on its
// "network" row the weights going out and the gradient coming back.
void add_exchange_spans(const WorkerExchange& e, std::int64_t offset, std::vector<TraceSpan>& out) {
  const auto on_ours = [offset](std::int64_t worker_time) { return worker_time - offset; };
  auto span = [&](const char* thread, const char* name, std::int64_t start, std::int64_t end) {
    out.push_back(TraceSpan{e.worker + 1, e.worker_name, thread, name, start, std::max(start, end), e.step});
  };
  const auto& t = e.timing;
  if (t.previous_answered > 0 && t.idle_since >= t.previous_answered)
    span("compute", "prefetch", on_ours(t.previous_answered), on_ours(t.idle_since));
  if (t.idle_since > 0 && t.received >= t.idle_since) span("compute", "wait", on_ours(t.idle_since), on_ours(t.received));
  span("compute", e.used ? "compute" : "compute (dropped)", on_ours(t.received), on_ours(t.answered));
  // Causality bounds what the offset estimate cannot: the weights arrive after they were sent, the
  // gradient leaves after they arrived and comes back no later than it was received.
  const auto arrived = clamp_to(on_ours(t.received), e.sent, e.returned);
  const auto left = clamp_to(on_ours(t.answered), arrived, e.returned);
  span("network", "weights in", e.sent, arrived);
  span("network", "gradient out", left, e.returned);
}

}  // namespace

std::int64_t estimate_clock_offset(const std::vector<WorkerExchange>& exchanges) {
  std::int64_t best_delay = std::numeric_limits<std::int64_t>::max();
  std::int64_t offset = 0;
  for (const auto& e : exchanges) {
    const auto& t = e.timing;
    if (t.received == 0 || t.answered < t.received || e.returned < e.sent) continue;
    const auto delay = (e.returned - e.sent) - (t.answered - t.received);
    if (delay >= best_delay) continue;
    best_delay = delay;
    offset = ((t.received - e.sent) + (t.answered - e.returned)) / 2;
  }
  return offset;
}

void TraceRecorder::add(TraceSpan span) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spans_.size() + exchanges_.size() >= max_records) ++dropped_;
  else spans_.push_back(std::move(span));
}

void TraceRecorder::add_clock_probe(std::uint32_t worker, std::int64_t sent, std::int64_t worker_time,
                                    std::int64_t returned) {
  std::lock_guard<std::mutex> lock(mutex_);
  WorkerExchange probe;
  probe.worker = worker;
  probe.sent = sent;
  probe.returned = returned;
  probe.timing.received = probe.timing.answered = worker_time;
  probes_.push_back(probe);
}

void TraceRecorder::add(WorkerExchange exchange) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spans_.size() + exchanges_.size() >= max_records) ++dropped_;
  else exchanges_.push_back(std::move(exchange));
}

std::vector<TraceSpan> TraceRecorder::spans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::uint32_t, std::vector<WorkerExchange>> by_worker;
  for (const auto& e : exchanges_) by_worker[e.worker].push_back(e);
  std::vector<TraceSpan> out = spans_;
  for (const auto& [worker, exchanges] : by_worker) {
    std::vector<WorkerExchange> probes;
    for (const auto& probe : probes_)
      if (probe.worker == worker) probes.push_back(probe);
    const auto offset = estimate_clock_offset(probes.empty() ? exchanges : probes);
    for (const auto& e : exchanges) add_exchange_spans(e, offset, out);
  }
  return out;
}

std::vector<WorkerExchange> TraceRecorder::clock_probes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return probes_;
}

std::vector<WorkerExchange> TraceRecorder::exchanges() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exchanges_;
}

std::size_t TraceRecorder::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

}  // namespace psgrad
