// Sizes are CAF's binary serializer's, as the messages cross the network between processes; one shard,
// since splitting keys over K shards adds only K - 1 message headers.
#include "bench/sparse_bytes.hpp"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "actors/actor_config.hpp"
#include "actors/row_router.hpp"
#include "bench/sparse_data.hpp"
#include "caf/actor_system.hpp"
#include "caf/binary_serializer.hpp"
#include "model/sparse_batcher.hpp"

namespace psgrad::bench {

namespace {

constexpr const char* kSection = "9 sparse";

template <class Payload>
double serialized_bytes(caf::actor_system& system, Payload payload) {
  std::vector<char> bytes;
  caf::binary_serializer sink{system, bytes};
  if (auto error = sink(payload)) throw std::runtime_error("serializing a sparse message: " + caf::to_string(error));
  return static_cast<double>(bytes.size());
}

void measure_at(caf::actor_system& system, const SparseEffort& effort, std::uint64_t table_rows,
                const std::string& prefix, Report& report) {
  const auto job = click_job(32, table_rows);
  const auto data = click_dataset(effort.shard_batches * job.training.batch_size, 2);
  const auto model = SparseModel::build(job.model.architecture, job.model.settings, data->num_classes()).value();
  const double dense_bytes = 2.0 * 4.0 * static_cast<double>(model.dense().parameter_count());
  double table_floats = 0;
  for (const auto& field : model.fields()) table_floats += static_cast<double>(field.rows * field.width);
  SparseBatcher batches(data, job.training.batch_size, 2);
  std::vector<double> bytes, keys;
  for (std::size_t b = 0; b < effort.shard_batches; ++b) {
    const auto lookup = model.look_up(batches.next().fields).value();
    std::vector<SparseRows> rows;
    PulledRows answer;
    double touched = 0;
    for (std::size_t f = 0; f < lookup.fields.size(); ++f) {
      rows.emplace_back(lookup.fields[f].keys, model.fields()[f].width);
      answer.tables.push_back(TableRows{static_cast<std::uint32_t>(f), rows.back()});
      touched += static_cast<double>(lookup.fields[f].keys.size());
    }
    const auto pull = split_pull(lookup, 1, 0, false).front();
    const auto push = split_push(0, 0, rows, 1, true).front();
    bytes.push_back(serialized_bytes(system, pull) + serialized_bytes(system, answer) +
                    serialized_bytes(system, push) + dense_bytes);
    keys.push_back(touched);
  }
  const auto note = fmt::format("one worker's batch of 128, 26 tables of 32 x {}", table_rows);
  report.add({prefix + "bytes_per_step", kSection,
              fmt::format("bytes a worker's step moves, tables of {} rows", table_rows), summarize(bytes), "B",
              "pull + rows + row push + dense weights and gradient"});
  report.add({prefix + "dense_equivalent_bytes_per_step", kSection, "  the same with every table sent whole",
              exact(dense_bytes + 2.0 * 4.0 * table_floats), "B", "(dense + table floats) x 4 B x 2"});
  report.add({prefix + "unique_keys_per_step", kSection, "  unique keys a batch touches", summarize(keys), "keys",
              note});
}

}  // namespace

void measure_sparse_bytes(const SparseEffort& effort, Report& report) {
  ActorConfig config(1);
  caf::actor_system system{config};
  measure_at(system, effort, std::uint64_t{1} << 16, "sparse.", report);
  measure_at(system, effort, std::uint64_t{1} << 24, "sparse.table_2_24.", report);
}

}  // namespace psgrad::bench
