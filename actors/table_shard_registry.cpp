#include "actors/table_shard_registry.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "model/table_state_pieces.hpp"

namespace psgrad {

namespace {

using ShardsPromise = caf::typed_response_promise<std::vector<TableShardAddress>>;

class TableShardRegistry : public TableShardRegistryActor::base {
 public:
  TableShardRegistry(caf::actor_config& config, TableShardRegistrySetup setup)
      : TableShardRegistryActor::base(config), setup_(std::move(setup)), joined_(setup_.shards) {}

  behavior_type make_behavior() override {
    set_down_handler([this](caf::down_msg& down) {
      for (const auto& joined : joined_)
        if (joined.shard && joined.shard.address() == down.source && setup_.loss)
          setup_.loss->note(table_shard_loss_line(system(), joined.index, down.reason));
    });
    return {
        [this](table_hello_atom, std::uint32_t protocol, const std::string& token,
               std::uint32_t index) -> caf::result<JoinOffer> {
          const auto who = fmt::format("table shard {}", index);
          if (protocol != protocol_version)
            return refuse(who, fmt::format("protocol version {} does not match the server's {}", protocol,
                                           protocol_version));
          if (token != setup_.token) return refuse(who, "wrong join token");
          if (index >= setup_.shards)
            return refuse(who, fmt::format("this run has table shards 0 to {} (cluster.servers = {})",
                                           setup_.shards - 1, setup_.shards));
          if (joined_[index].shard) return refuse(who, "that shard has already joined");
          JoinOffer offer{protocol_version, index, setup_.shards, setup_.config};
          offer.num_classes = setup_.num_classes;
          return offer;
        },
        [this](table_join_atom, TableShardJoin& join) -> caf::result<std::uint32_t> {
          const auto who = fmt::format("table shard {} from {}", join.index, join.name);
          if (join.index >= setup_.shards || joined_[join.index].shard || !join.shard)
            return refuse(who, "that shard was not expected");
          if (join.host.empty() || join.port == 0) return refuse(who, "it gave no address for workers to reach it");
          if (auto differs = layout_difference(join.layout, setup_.layout)) return refuse(who, *differs);
          joined_[join.index] = TableShardAddress{join.index, join.host, join.port, join.shard, join.host_identity};
          monitor(join.shard);
          ++count_;
          event(fmt::format("table shard {} joined from {}; workers reach it at {}:{} ({} of {})", join.index,
                            join.name, join.host, join.port, count_, setup_.shards));
          if (count_ == setup_.shards) {
            for (auto& waiting : waiting_) waiting.deliver(joined_);
            waiting_.clear();
          }
          return join.index;
        },
        [this](table_shards_atom, const TableLayout& layout,
               const std::string& who) -> caf::result<std::vector<TableShardAddress>> {
          if (auto differs = layout_difference(layout, setup_.layout)) return refuse(who, *differs);
          if (count_ == setup_.shards) return joined_;
          waiting_.push_back(make_response_promise<std::vector<TableShardAddress>>());
          return waiting_.back();
        },
        [this](table_start_atom, std::uint32_t index) -> caf::result<TableShardStart> {
          const auto who = fmt::format("table shard {}", index);
          if (index >= setup_.shards)
            return refuse(who, fmt::format("this run has table shards 0 to {} (cluster.servers = {})",
                                           setup_.shards - 1, setup_.shards));
          auto start = setup_.start;
          if (!setup_.resume) return start;
          auto part = tables_for_shard(*setup_.resume, index, setup_.shards);
          if (!part) return refuse(who, "the checkpoint's rows: " + part.error());
          auto& pieces = pieces_[index];
          pieces = cut_table_states(*part, setup_.piece_words);
          start.pieces = static_cast<std::uint32_t>(pieces.size());
          return start;
        },
        [this](table_rows_atom, std::uint32_t index, std::uint32_t piece) -> caf::result<ShardTablesState> {
          const auto who = fmt::format("table shard {}", index);
          auto found = pieces_.find(index);
          if (found == pieces_.end() || piece >= found->second.size())
            return refuse(who, fmt::format("asked for piece {} of its rows, which it was not offered", piece));
          // Each piece is sent once: the registry keeps none of the rows a shard has taken.
          ShardTablesState state{index, setup_.shards, setup_.start.version, std::move(found->second[piece])};
          if (piece + 1 == found->second.size()) pieces_.erase(found);
          return state;
        },
    };
  }

 private:
  caf::error refuse(const std::string& who, const std::string& reason) {
    event(fmt::format("refused {}: {}", who, reason));
    return caf::make_error(caf::sec::request_receiver_down, reason);
  }

  void event(const std::string& line) {
    if (setup_.on_event) setup_.on_event(line);
  }

  TableShardRegistrySetup setup_;
  std::vector<TableShardAddress> joined_;  // by index; a null shard has not joined
  std::uint32_t count_ = 0;
  std::vector<ShardsPromise> waiting_;
  std::map<std::uint32_t, std::vector<std::vector<TableState>>> pieces_;  // by shard, until its last is sent
};

}  // namespace

TableShardRegistryActor spawn_table_shard_registry(caf::actor_system& system, TableShardRegistrySetup setup) {
  return system.spawn<TableShardRegistry>(std::move(setup));
}

}  // namespace psgrad
