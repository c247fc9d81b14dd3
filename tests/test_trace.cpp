// Trace spans of a run: every worker appears, rows nest, clocks of other processes are mapped onto
// ours, and the Chrome trace JSON is what the viewers read.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/trace_recorder.hpp"
#include "io/chrome_trace.hpp"
#include "tests/actor_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

std::shared_ptr<TraceRecorder> traced_recording(const TrainingJob& job) {
  const auto data = synthetic_data(320, 12, 4, 31);
  ActorConfig config(2);
  caf::actor_system system{config};
  auto trace = std::make_shared<TraceRecorder>();
  DriverHooks hooks;
  hooks.trace = trace;
  auto summary = train_in_process(system, job, data, data, nullptr, std::move(hooks));
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  return trace;
}

std::vector<TraceSpan> traced_run(const TrainingJob& job) { return traced_recording(job)->spans(); }

// Within one row, spans either follow each other or one holds the other: what a timeline can draw.
// Returns the first pair that overlaps partly, as text; empty when none does.
std::string first_overlap(std::vector<TraceSpan> row) {
  std::sort(row.begin(), row.end(), [](const TraceSpan& a, const TraceSpan& b) {
    return std::make_tuple(a.start_ns, -a.end_ns) < std::make_tuple(b.start_ns, -b.end_ns);
  });
  std::vector<const TraceSpan*> open;
  for (const auto& span : row) {
    while (!open.empty() && open.back()->end_ns <= span.start_ns) open.pop_back();
    if (!open.empty() && span.end_ns > open.back()->end_ns)
      return open.back()->name + " [" + std::to_string(open.back()->start_ns) + ", " +
             std::to_string(open.back()->end_ns) + "] and " + span.name + " [" + std::to_string(span.start_ns) +
             ", " + std::to_string(span.end_ns) + "]";
    open.push_back(&span);
  }
  return {};
}

std::size_t count(const std::vector<TraceSpan>& spans, std::uint32_t process, const std::string& thread,
                  const std::string& name) {
  return static_cast<std::size_t>(std::count_if(spans.begin(), spans.end(), [&](const TraceSpan& s) {
    return s.process == process && s.thread == thread && s.name == name;
  }));
}

WorkerExchange exchange(std::int64_t sent, std::int64_t returned, std::int64_t received, std::int64_t answered) {
  WorkerExchange e;
  e.worker_name = "worker 0";
  e.sent = sent;
  e.returned = returned;
  e.timing.received = received;
  e.timing.answered = answered;
  return e;
}

}  // namespace

TEST_CASE("a traced sync run shows every worker's compute, wait and transfers, and every row nests") {
  auto job = small_job(TrainingMode::sync, 3, 10);
  job.cluster.servers = 2;
  job.evaluation.frequency = 5;
  const auto spans = traced_run(job);
  for (std::uint32_t worker = 0; worker < 3; ++worker) {
    CAPTURE(worker);
    const auto process = worker + 1;
    CHECK(count(spans, process, "compute", "compute") == 10);
    CHECK(count(spans, process, "compute", "wait") == 9);  // none before the first request
    CHECK(count(spans, process, "network", "weights in") == 10);
    CHECK(count(spans, process, "network", "gradient out") == 10);
  }
  CHECK(count(spans, 0, "driver", "step") == 10);
  CHECK(count(spans, 0, "shard 0", "apply") == 10);
  CHECK(count(spans, 0, "shard 1", "apply") == 10);
  CHECK(count(spans, 0, "evaluator", "evaluate") == 3);  // iterations 0 and 5, and the final one
  std::map<std::pair<std::uint32_t, std::string>, std::vector<TraceSpan>> rows;
  for (const auto& span : spans) {
    CHECK(span.end_ns >= span.start_ns);
    rows[{span.process, span.thread}].push_back(span);
  }
  for (const auto& [row, row_spans] : rows) {
    CAPTURE(row.first);
    CAPTURE(row.second);
    CHECK(first_overlap(row_spans) == "");
  }
}

TEST_CASE("a traced async run shows every worker too") {
  const auto spans = traced_run(small_job(TrainingMode::async, 2, 8));
  std::set<std::uint32_t> workers;
  for (const auto& span : spans)
    if (span.name == "compute") workers.insert(span.process);
  CHECK(workers == std::set<std::uint32_t>{1, 2});
}

TEST_CASE("every worker's clock is probed before the first step, not behind a compute") {
  for (const auto mode : {TrainingMode::sync, TrainingMode::async}) {
    CAPTURE(static_cast<int>(mode));
    const auto trace = traced_recording(small_job(mode, 2, 8));
    const auto probes = trace->clock_probes();
    const auto exchanges = trace->exchanges();
    REQUIRE(!exchanges.empty());
    std::int64_t first_sent = exchanges.front().sent;
    for (const auto& e : exchanges) first_sent = std::min(first_sent, e.sent);
    std::map<std::uint32_t, std::size_t> per_worker;
    for (const auto& probe : probes) {
      ++per_worker[probe.worker];
      CHECK(probe.returned <= first_sent);
    }
    CHECK(per_worker.size() == 2);
    for (const auto& entry : per_worker) CHECK(entry.second == 8);  // the driver's clock_probes, all answered
  }
}

TEST_CASE("a worker's clock offset is estimated from its exchange with the shortest round trip") {
  const std::int64_t ahead = 5'000'000'000;  // the worker's clock reads 5 s more than ours
  // A slow exchange with all of its delay on the way out, then a quick symmetric one.
  const std::vector<WorkerExchange> exchanges = {exchange(1000, 9000, ahead + 8000, ahead + 8500),
                                                 exchange(20000, 21200, ahead + 20100, ahead + 21100)};
  CHECK(estimate_clock_offset(exchanges) == ahead);
  CHECK(estimate_clock_offset({}) == 0);
}

TEST_CASE("clock probes taken at join set a worker's offset, ahead of its exchanges") {
  const std::int64_t ahead = 7'000'000'000;
  TraceRecorder trace;
  // The exchange alone would say the worker's clock is 5 s ahead; the probes at join say 7 s.
  trace.add(exchange(1000, 2000, 5'000'001'100, 5'000'001'900));
  auto compute_start = [&trace] {
    for (const auto& span : trace.spans())
      if (span.name == "compute") return span.start_ns;
    return std::int64_t{-1};
  };
  CHECK(compute_start() == 1100);
  trace.add_clock_probe(0, 100, ahead + 300, 500);  // the round trip of 400 ns has the worker's time in the middle
  trace.add_clock_probe(0, 600, ahead + 900, 2600);  // a slower probe, ignored
  CHECK(compute_start() == 5'000'001'100 - ahead);
}

TEST_CASE("transfer spans stay within their exchange when the offset estimate is off") {
  TraceRecorder trace;
  // The quick exchange fixes the offset at 0; in the other, the worker's times read too early.
  trace.add(exchange(0, 1000, 100, 900));
  trace.add(exchange(5000, 6000, 4000, 4500));
  for (const auto& span : trace.spans()) {
    if (span.thread != "network" || span.start_ns < 5000) continue;
    CHECK(span.start_ns >= 5000);
    CHECK(span.end_ns <= 6000);
  }
}

TEST_CASE("a Chrome trace holds complete events and names every process and row") {
  const std::vector<ChromeTraceEvent> events = {{0, "server", "driver", "step", 0.0, 12.5, 0},
                                                {1, "worker 0", "compute", "compute", 1.0, 10.0, 0},
                                                {1, "worker 0", "network", "weights in", 0.5, 0.5, 0},
                                                {2, "worker 1", "compute", "compute", 1.0, 11.0, 0}};
  const auto trace = nlohmann::json::parse(chrome_trace_json(events));
  REQUIRE(trace.at("traceEvents").is_array());
  std::map<int, std::string> process_names;
  std::set<std::pair<int, int>> named_rows, used_rows;
  std::size_t complete = 0;
  for (const auto& event : trace.at("traceEvents")) {
    const auto phase = event.at("ph").get<std::string>();
    const auto pid = event.at("pid").get<int>();
    const auto tid = event.at("tid").get<int>();
    if (phase == "X") {
      ++complete;
      CHECK(event.at("ts").is_number());
      CHECK(event.at("dur").get<double>() >= 0.0);
      used_rows.insert({pid, tid});
    } else if (event.at("name") == "process_name") {
      process_names[pid] = event.at("args").at("name").get<std::string>();
    } else if (event.at("name") == "thread_name") {
      named_rows.insert({pid, tid});
    }
  }
  CHECK(complete == events.size());
  CHECK(process_names.size() == 3);
  CHECK(process_names[2] == "worker 0");
  CHECK(used_rows == named_rows);
  CHECK(used_rows.size() == 4);
}
