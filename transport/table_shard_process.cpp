#include "transport/table_shard_process.hpp"

#include <optional>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/table_parts.hpp"
#include "model/sparse_model.hpp"
#include "model/table_layout.hpp"
#include "model/table_memory.hpp"
#include "model/table_state_pieces.hpp"
#include "payloads/shared_memory.hpp"
#include "runtime/error_text.hpp"
#include "transport/table_shard_routes.hpp"

namespace psgrad {

namespace {

// "1.5 GiB"-style sizes, here without io/'s helper: binary units with one decimal.
std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(units)) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", bytes, units[unit]);
}

// How this shard starts, and the rows of a resumed run it holds, asked of the server piece by piece.
struct ShardBeginning {
  TableShardStart start;
  std::vector<TableState> restore;  // per table; empty: none
  std::uint64_t rows = 0;
};

Result<ShardBeginning> ask_how_to_start(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                                        std::uint32_t index, caf::timespan timeout) {
  auto& system = self->system();
  ShardBeginning beginning;
  std::optional<std::string> failed;
  self->request(coordinator, timeout, table_start_atom::value, index)
      .receive([&](TableShardStart& start) { beginning.start = start; },
               [&](caf::error& error) { failed = "server refused this shard: " + error_text(system, error); });
  if (failed) return Error{*failed};
  for (std::uint32_t piece = 0; piece < beginning.start.pieces; ++piece) {
    self->request(coordinator, timeout, table_rows_atom::value, index, piece)
        .receive(
            [&](ShardTablesState& part) {
              if (part.index != index || part.version != beginning.start.version) {
                failed = fmt::format("the server sent the rows of table shard {} at version {}, not this shard's "
                                     "at version {}",
                                     part.index, part.version, beginning.start.version);
                return;
              }
              for (const auto& table : part.tables) beginning.rows += table.size();
              if (auto joined = append_table_states(beginning.restore, std::move(part.tables)); !joined)
                failed = fmt::format("the checkpoint's rows, piece {} of {}: {}", piece + 1, beginning.start.pieces,
                                     joined.error());
            },
            [&](caf::error& error) {
              failed = fmt::format("the checkpoint's rows, piece {} of {}: {}", piece + 1, beginning.start.pieces,
                                   error_text(system, error));
            });
    if (failed) return Error{*failed};
  }
  return beginning;
}

}  // namespace

Status check_table_share_fits(const TableShardProcessSetup& setup, std::uint64_t num_classes) {
  if (!setup.machine_bytes) return success();
  auto model =
      SparseModel::build(setup.job.model, num_classes, setup.number_names);
  if (!model) return Error{model.error()};
  const auto layout = table_layout(*model, setup.job.training.seed);
  const auto shards = static_cast<std::uint32_t>(setup.job.cluster.servers);
  std::vector<TableSize> tables;
  for (std::size_t f = 0; f < layout.tables.size(); ++f)
    tables.push_back(TableSize{std::to_string(f), layout.tables[f].rows, layout.tables[f].width});
  const double needed = shard_table_bytes(
      tables,
      kept_floats_per_value(setup.optimizer.kind == TableOptimizerKind::adagrad, setup.job.training.save_best), shards);
  if (needed <= static_cast<double>(*setup.machine_bytes)) return success();
  std::uint64_t rows = 0;
  for (const auto& table : layout.tables) rows += (table.rows + shards - 1) / shards;
  return Error{fmt::format("table shard {} of {}: its share of the tables needs {} when every row is touched ({} "
                           "rows of {} tables); this machine has {}; use more table shards (cluster.servers) or "
                           "fewer rows (embedding_rows)",
                           setup.index, shards, bytes_text(needed), rows, layout.tables.size(),
                           bytes_text(static_cast<double>(*setup.machine_bytes)))};
}

Result<RunEnding> serve_table_shard(caf::scoped_actor& self, const ServerConnection& connection,
                                    const TableShardProcessSetup& setup) {
  auto& system = self->system();
  const auto& job = setup.job;
  if (job.cluster.servers == 0 || setup.index >= job.cluster.servers)
    return Error{fmt::format("the run has {} table shards, not a shard {}", job.cluster.servers, setup.index)};
  // Before anything is allocated: a share the machine cannot hold is refused at once.
  if (auto fits = check_table_share_fits(setup, connection.offer.num_classes); !fits) return Error{fits.error()};
  auto model = SparseModel::build(job.model, connection.offer.num_classes,
                                  setup.number_names);
  if (!model) return Error{model.error()};
  auto beginning = ask_how_to_start(self, connection.coordinator, setup.index, job.cluster.request_timeout);
  if (!beginning) return Error{beginning.error()};
  const auto& start = beginning->start;
  auto shard_setup =
      embedding_shard_setup(job, *model, setup.optimizer, start.start_iteration, start.checkpoints,
                            start.resume ? std::optional<std::uint64_t>(start.version) : std::nullopt);
  shard_setup.index = setup.index;
  shard_setup.restore = std::move(beginning->restore);
  auto shard = spawn_embedding_shard(system, shard_setup);
  if (!shard) return Error{shard.error()};
  const auto end_shard = [&] { caf::anon_send_exit(*shard, caf::exit_reason::user_shutdown); };
  auto port = TableShardPort::open(system, *shard, setup.listen);
  if (!port) {
    end_shard();
    return Error{"--listen: " + port.error()};
  }
  // Workers on this host send their row gradients and take their rows through shared memory.
  const auto host_identity = job.cluster.shared_memory ? shared_memory_host_identity() : std::string();
  accept_shared_memory(!host_identity.empty());
  TableShardJoin join{setup.index, table_layout(*model, job.training.seed), *shard, port->host(), port->port(),
                      setup.name, host_identity};
  Status joined = Error{"no answer"};
  self->request(connection.coordinator, std::chrono::seconds(10), table_join_atom::value, join)
      .receive([&](std::uint32_t) { joined = success(); },
               [&](caf::error& error) { joined = Error{"server refused this shard: " + error_text(system, error)}; });
  if (!joined) {
    end_shard();
    return Error{joined.error()};
  }
  if (setup.say) {
    const auto resumed = start.resume ? fmt::format(" ({} rows of the checkpoint at version {})", beginning->rows,
                                                    start.version)
                                      : std::string();
    setup.say(fmt::format("holding table shard {} of {}{}; workers reach it at {}:{}", setup.index,
                          job.cluster.servers, resumed, port->host(), port->port()));
  }
  if (setup.on_joined) setup.on_joined(*shard);
  return serve_until_stopped(self, connection.coordinator, shard->address(), std::chrono::seconds(2));
}

}  // namespace psgrad
