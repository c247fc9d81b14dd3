// The shard is asked from a scoped actor, one request at a time, so a figure is one shard's own rate
// with CAF's in-process messaging included (nothing is serialized in one process). Rows are made only
// by a push, so every timing starts after one push of each batch: the Zipf head is then in the tables
// and the tail of new keys is what a running job meets too.
#include "bench/sparse_shard_cost.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "actors/actor_config.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/row_router.hpp"
#include "bench/sparse_data.hpp"
#include "caf/actor_system.hpp"
#include "caf/scoped_actor.hpp"
#include "model/gradient_sum.hpp"
#include "model/sparse_batcher.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad::bench {

namespace {

constexpr const char* kSection = "9 sparse";
constexpr std::uint64_t kTableRows = std::uint64_t{1} << 20;

// What one worker sends one shard for each of `batches` batches: the pull of its keys and a push of row
// gradients for them (small made-up values with the sums of squares an async push carries).
struct ShardWorkload {
  TrainingJob job;
  std::vector<RowPull> pulls;
  std::vector<RowPush> pushes;
  std::size_t rows = 0;  // keys over every batch and table
};

ShardWorkload make_workload(const SparseEffort& effort, std::size_t width) {
  ShardWorkload work{click_job(width, kTableRows)};
  work.job.cluster.mode = TrainingMode::async;
  const auto& job = work.job;
  const auto data = click_dataset(effort.shard_batches * job.training.batch_size, 1);
  const auto model = SparseModel::build(job.model.architecture, job.model.settings, data->num_classes()).value();
  SparseBatcher batches(data, job.training.batch_size, 1);
  for (std::size_t b = 0; b < effort.shard_batches; ++b) {
    const auto lookup = model.look_up(batches.next().fields).value();
    work.pulls.push_back(split_pull(lookup, 1, 0, false).front());
    std::vector<SparseRows> gradients;
    for (const auto& field : lookup.fields) {
      gradients.emplace_back(field.keys, width);
      for (std::size_t i = 0; i < gradients.back().values.size(); ++i)
        gradients.back().values[i] = 1e-3f * static_cast<float>(static_cast<int>(i % 7) - 3);
      work.rows += field.keys.size();
    }
    work.pushes.push_back(split_push(0, 0, gradients, 1, true).front());
  }
  return work;
}

EmbeddingShardSetup shard_setup(const ShardWorkload& work) {
  const auto model = SparseModel::build(work.job.model.architecture, work.job.model.settings, 2).value();
  EmbeddingShardSetup setup;
  for (std::size_t f = 0; f < model.fields().size(); ++f)
    setup.tables.push_back({model.fields()[f].width, embedding_init_seed(work.job.training.seed, f)});
  setup.run_optimizer = work.job.optimizer;
  setup.mode = TrainingMode::async;
  setup.workers = 1;
  return setup;
}

// Drives one shard: samples of rows per second of pulls alone, pushes alone, and a pull and a push a batch.
struct ShardTimings {
  Stats pulled, pushed, step_row_seconds;
};

ShardTimings drive_shard(const SparseEffort& effort, const ShardWorkload& work) {
  ActorConfig config(1);
  caf::actor_system system{config};
  auto shard = spawn_embedding_shard(system, shard_setup(work));
  if (!shard) throw std::runtime_error("embedding shard: " + shard.error());
  caf::scoped_actor self{system};
  auto fail = [](caf::error& error) { throw std::runtime_error("embedding shard refused: " + caf::to_string(error)); };
  auto pull = [&](std::size_t b) {
    self->request(*shard, caf::infinite, pull_atom::value, work.pulls[b]).receive([](PulledRows&) {}, fail);
  };
  auto push = [&](std::size_t b) {
    self->request(*shard, caf::infinite, push_rows_atom::value, work.pushes[b]).receive([](bool) {}, fail);
  };
  for (std::size_t b = 0; b < work.pushes.size(); ++b) push(b);
  // Each sample passes over every batch as often as fills effort.seconds_per_run / 3.
  auto rows_per_second = [&](const std::function<void(std::size_t)>& each) {
    std::vector<double> samples;
    std::size_t passes = 1;
    for (std::size_t r = 0; r <= effort.repeats; ++r) {
      const auto start = Clock::now();
      for (std::size_t p = 0; p < passes; ++p)
        for (std::size_t b = 0; b < work.pulls.size(); ++b) each(b);
      const double seconds = seconds_since(start);
      if (r == 0) {  // the probe sizes the samples
        passes = std::max<std::size_t>(1, static_cast<std::size_t>(effort.seconds_per_run / 3.0 / seconds));
        continue;
      }
      samples.push_back(static_cast<double>(work.rows * passes) / seconds);
    }
    return summarize(samples);
  };
  ShardTimings timings;
  timings.pulled = rows_per_second(pull);
  timings.pushed = rows_per_second(push);
  timings.step_row_seconds = reciprocal(rows_per_second([&](std::size_t b) {
    pull(b);
    push(b);
  }));
  caf::anon_send_exit(*shard, caf::exit_reason::user_shutdown);
  return timings;
}

// The same work without a shard: every touched row in one array by a slot found before the clock starts,
// each batch's rows copied out, then stepped by lazy Adam's per-row arithmetic (model/lazy_adam.cpp).
Stats plain_loop_row_seconds(const SparseEffort& effort, const ShardWorkload& work) {
  const auto settings = lazy_adam_settings(work.job.optimizer).value();
  const std::size_t width = work.pushes.front().tables.front().rows.width;
  std::unordered_map<std::uint64_t, std::size_t> slot_of;  // (table, key) -> slot
  std::vector<std::vector<std::vector<std::size_t>>> slots;  // per batch, per table, per key
  for (const auto& push : work.pushes) {
    slots.emplace_back();
    for (const auto& entry : push.tables) {
      slots.back().emplace_back();
      for (const auto key : entry.rows.keys) {
        const auto found = slot_of.emplace(key * 64 + entry.table, slot_of.size()).first;
        slots.back().back().push_back(found->second);
      }
    }
  }
  std::vector<float> rows(slot_of.size() * width, 0.01f), m(rows.size(), 0.0f), v(rows.size(), 0.0f);
  std::vector<std::uint64_t> steps(slot_of.size(), 0);
  std::vector<float> pulled(rows.size());
  const auto b1 = static_cast<float>(settings.beta1), b2 = static_cast<float>(settings.beta2);
  const auto eps = static_cast<float>(settings.eps);
  auto step = [&](std::size_t b) {
    const auto& push = work.pushes[b];
    float* out = pulled.data();
    for (const auto& table_slots : slots[b])
      for (const auto slot : table_slots) out = std::copy_n(rows.data() + slot * width, width, out);
    for (std::size_t t = 0; t < push.tables.size(); ++t) {
      const auto& gradient = push.tables[t].rows;
      const float scale = clip_scale_from(push.squares[t], settings.grad_clip);
      for (std::size_t i = 0; i < gradient.size(); ++i) {
        const std::size_t slot = slots[b][t][i];
        const auto count = static_cast<double>(++steps[slot]);
        const auto rate = static_cast<float>(settings.learn_rate * std::sqrt(1.0 - std::pow(settings.beta2, count)) /
                                             (1.0 - std::pow(settings.beta1, count)));
        float* w = rows.data() + slot * width;
        float* mi = m.data() + slot * width;
        float* vi = v.data() + slot * width;
        const float* g = gradient.row(i);
        for (std::size_t j = 0; j < width; ++j) {
          const float x = g[j] * scale;
          mi[j] = b1 * mi[j] + (1.0f - b1) * x;
          vi[j] = b2 * vi[j] + (1.0f - b2) * x * x;
          w[j] -= rate * mi[j] / (std::sqrt(vi[j]) + eps);
        }
      }
    }
  };
  for (std::size_t b = 0; b < work.pushes.size(); ++b) step(b);
  const double row_count = static_cast<double>(work.rows);
  const auto pass = [&] {
    for (std::size_t b = 0; b < work.pushes.size(); ++b) step(b);
  };
  const auto per_pass = time_per_call(std::max<std::size_t>(effort.repeats, 3),
                                      calls_for(effort.seconds_per_run / 6.0, pass), pass);
  return scaled(per_pass, 1.0 / row_count);
}

}  // namespace

void measure_shard_cost(const SparseEffort& effort, Report& report) {
  for (const std::size_t width : {32, 64}) {
    const auto work = make_workload(effort, width);
    const auto timings = drive_shard(effort, work);
    const auto suffix = width == 32 ? std::string() : fmt::format(".width_{}", width);
    const auto note = fmt::format("1 shard, 26 tables of {} x 2^20, batch 128, {:.0f} keys a batch", width,
                                  static_cast<double>(work.rows) / static_cast<double>(work.pulls.size()));
    report.add({"sparse.rows_pulled_per_s_per_shard" + suffix, kSection,
                fmt::format("table shard: rows pulled, width {}", width), timings.pulled, "rows/s", note});
    report.add({"sparse.rows_pushed_per_s_per_shard" + suffix, kSection,
                fmt::format("table shard: rows pushed (lazy Adam), width {}", width), timings.pushed, "rows/s",
                note});
    if (width != 32) continue;
    const auto plain = plain_loop_row_seconds(effort, work);
    report.add({"sparse.server_row_ns", kSection, "shard step (pull + push) per touched row",
                scaled(timings.step_row_seconds, 1e9), "ns", "width 32, request and answer included"});
    report.add({"sparse.plain_loop_row_ns", kSection, "plain loop: the same copies and Adam per row",
                scaled(plain, 1e9), "ns", "rows in one array, slots found beforehand"});
    report.add({"sparse.server_vs_plain_loop", kSection, "  shard step ÷ plain loop",
                ratio(timings.step_row_seconds, plain), "ratio", "target <= 2"});
  }
}

}  // namespace psgrad::bench
