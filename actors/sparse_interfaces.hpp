// The typed interfaces of embedding table shards, as workers, the evaluator and other shards see them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"
#include "payloads/messages.hpp"
#include "payloads/sparse_messages.hpp"
#include "payloads/table_join_messages.hpp"
#include "payloads/table_state_messages.hpp"

namespace psgrad {

// A table shard as its peers see it: told their parts of each sync step's sums of squares.
using TableShardPeer = caf::typed_actor<caf::reacts_to<table_squares_atom, TableSquares>>;

// Holds the rows of every table whose keys it owns (key % shards == its index) and their row optimizer.
// "pull" answers with rows (sync: once the steps before the pull's version are applied); "pushrows"
// takes one worker's row gradients of a batch (sync: acknowledged once kept, applied when the step has
// every worker's; async: applied, then acknowledged); "peers" (sync, several shards: every shard in
// index order) is acknowledged once it knows whom to tell its sums of squares ("tsquares"); "tables"
// answers with all its rows once it has taken the given number of steps; "tablestate" with its rows and
// their row optimizer state, for a checkpoint (sync: of exactly that step). With training.save_best,
// "scored" (a version, whether its evaluation is the best so far) keeps the rows when it is, and lets a
// sync step held for that evaluation go; "besttables" answers with the rows kept last (or all rows now,
// when none were). With backup workers, "stepworkers" (a version, the workers the dense server's step
// took) says whose rows that step sums.
using EmbeddingShardActor = caf::typed_actor<caf::replies_to<pull_atom, RowPull>::with<PulledRows>,
                                             caf::replies_to<push_rows_atom, RowPush>::with<bool>,
                                             caf::reacts_to<table_squares_atom, TableSquares>,
                                             caf::reacts_to<worker_lost_atom, std::uint32_t>,
                                             caf::reacts_to<step_workers_atom, std::uint64_t, std::vector<std::uint32_t>>,
                                             caf::replies_to<peers_atom, std::vector<TableShardPeer>>::with<bool>,
                                             caf::replies_to<tables_atom, std::uint64_t>::with<PulledRows>,
                                             caf::reacts_to<scored_atom, std::uint64_t, bool>,
                                             caf::replies_to<best_tables_atom>::with<PulledRows>,
                                             caf::replies_to<table_state_atom, std::uint64_t>::with<ShardTablesState>>;

// Where a table shard process listens for workers and holds its shard: each worker dials every table
// shard itself, so rows travel between the worker and the shard alone.
struct TableShardAddress {
  std::uint32_t index = 0;
  std::string host;
  std::uint16_t port = 0;
  EmbeddingShardActor shard;
  // Its process's shared_memory_host_identity() when it takes rows through shared memory, else empty.
  std::string host_identity;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableShardAddress& x) {
  return f(caf::meta::type_name("TableShardAddress"), x.index, x.host, x.port, x.shard, x.host_identity);
}

// A table shard process's join: its index, the tables' layout it built from the run's config, its
// shard, where workers reach it, a name for messages (host and pid), and its host identity (as in
// TableShardAddress).
struct TableShardJoin {
  std::uint32_t index = 0;
  TableLayout layout;
  EmbeddingShardActor shard;
  std::string host;
  std::uint16_t port = 0;
  std::string name;
  std::string host_identity;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableShardJoin& x) {
  return f(caf::meta::type_name("TableShardJoin"), x.index, x.layout, x.shard, x.host, x.port, x.name,
           x.host_identity);
}

// Admits the table shard processes of a sparse run (actors/table_shard_registry.hpp): "tablehello"
// (protocol version, join token, shard index) answers with the run's config; "tablejoin" registers a
// shard after checking its tables' layout against the server's; "tshards" (a layout and who asks)
// answers with every shard's address, in index order, once all have joined, to an asker whose layout
// is the server's; "tablestart" (a shard index) answers with how that shard starts, and "tablerows" (a
// shard index and a piece number, 0 .. pieces - 1) with each piece of its part of a resumed checkpoint's
// rows. Every refusal is one line naming the peer and what differs.
using TableShardRegistryActor =
    caf::typed_actor<caf::replies_to<table_hello_atom, std::uint32_t, std::string, std::uint32_t>::with<JoinOffer>,
                     caf::replies_to<table_join_atom, TableShardJoin>::with<std::uint32_t>,
                     caf::replies_to<table_shards_atom, TableLayout, std::string>::with<std::vector<TableShardAddress>>,
                     caf::replies_to<table_start_atom, std::uint32_t>::with<TableShardStart>,
                     caf::replies_to<table_rows_atom, std::uint32_t, std::uint32_t>::with<ShardTablesState>>;

}  // namespace psgrad
