// The typed interfaces of embedding table shards, as workers, the evaluator and other shards see them.
#pragma once

#include <cstdint>
#include <vector>

#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"
#include "payloads/messages.hpp"
#include "payloads/sparse_messages.hpp"
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
// their row optimizer state, for a checkpoint (sync: of exactly that step).
using EmbeddingShardActor = caf::typed_actor<caf::replies_to<pull_atom, RowPull>::with<PulledRows>,
                                             caf::replies_to<push_rows_atom, RowPush>::with<bool>,
                                             caf::reacts_to<table_squares_atom, TableSquares>,
                                             caf::replies_to<peers_atom, std::vector<TableShardPeer>>::with<bool>,
                                             caf::replies_to<tables_atom, std::uint64_t>::with<PulledRows>,
                                             caf::replies_to<table_state_atom, std::uint64_t>::with<ShardTablesState>>;

}  // namespace psgrad
