// The messages of sparse embedding tables between workers, the evaluator and table shards
// (actors/embedding_shard.hpp): pulls of a batch's keys, the rows that answer them, pushed row gradients
// and the sums of squares sync shards exchange. Keys and rows travel as raw bytes with fixed-size counts,
// so a message is a fixed header plus 8 bytes a key and 4 a float: proportional to the keys a batch
// touches, whatever the table's size.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "caf/atom.hpp"
#include "caf/deserializer.hpp"
#include "caf/meta/type_name.hpp"
#include "caf/serializer.hpp"
#include "model/sparse_rows.hpp"
#include "payloads/raw_vector.hpp"
#include "payloads/shared_rows.hpp"

namespace psgrad {

using pull_atom = caf::atom_constant<caf::atom("pull")>;
using push_rows_atom = caf::atom_constant<caf::atom("pushrows")>;
using table_squares_atom = caf::atom_constant<caf::atom("tsquares")>;
// A sync table shard stops waiting for this worker's pushes: the driver went on without it.
using worker_lost_atom = caf::atom_constant<caf::atom("wlost")>;
using tables_atom = caf::atom_constant<caf::atom("tables")>;
// training.save_best: the evaluator has scored the evaluation of a version, and whether it is the best so far;
// a table shard then keeps its rows, and later answers "besttables" with the rows it kept last.
using scored_atom = caf::atom_constant<caf::atom("scored")>;
using best_tables_atom = caf::atom_constant<caf::atom("besttables")>;
// Sync with backup workers: the dense server's step from a version took these workers' gradients, so the
// table shards sum these workers' rows for it.
using step_workers_atom = caf::atom_constant<caf::atom("stepworker")>;

using RawKeys = RawVector<std::uint64_t>;
using RawRowValues = RawVector<float>;
using RawWords = RawVector<std::uint64_t>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SparseRows& x) {
  return f(caf::meta::type_name("SparseRows"), RawKeys{x.keys}, x.width, RawRowValues{x.values});
}

// One table's keys of a pull: sorted, unique, and all held by the shard asked.
struct TableKeys {
  std::uint32_t table = 0;
  std::vector<std::uint64_t> keys;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableKeys& x) {
  return f(caf::meta::type_name("TableKeys"), x.table, RawKeys{x.keys});
}

// The rows of some keys. Sync: the rows that go with the dense weights of `version`, so the shard
// answers once it has applied every step before it; an evaluation pull also holds the step from
// `version` back at the run's evaluation points until it is answered (EmbeddingShardSetup). Async: the
// rows as they are.
struct RowPull {
  std::uint64_t version = 0;
  bool evaluation = false;
  std::vector<TableKeys> tables;  // ascending tables, each at most once
  // The asker is a process on the shard's host: the answer's rows go through shared memory.
  bool answer_through_shared_memory = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RowPull& x) {
  return f(caf::meta::type_name("RowPull"), x.version, x.evaluation, x.tables, x.answer_through_shared_memory);
}

// One table's rows, or row gradients, of some keys.
struct TableRows {
  std::uint32_t table = 0;
  SparseRows rows;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableRows& x) {
  return f(caf::meta::type_name("TableRows"), x.table, x.rows);
}

// A message's list of table rows, sent inline or, marked for a receiver on this host, through a slot
// of shared memory (payloads/shared_rows.hpp): a route byte, then the rows or the slot's reference.
// Rows that arrived by a reference that could not be taken arrive as none, with the reason in `refusal`.
struct TableRowsRoute {
  std::vector<TableRows>& tables;
  bool through_shared_memory;
  std::string& refusal;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableRowsRoute x) {
  enum : std::uint8_t { inline_rows = 0, shared_rows = 1 };
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    if (x.through_shared_memory && !x.tables.empty())
      if (auto where = put_rows_in_shared_memory(x.tables)) {
        std::uint8_t route = shared_rows;
        return f(route, where->slot.pid, where->slot.fd, where->slot.key, where->slot.slot, where->slot.sequence,
                 where->slot.checksum, where->bytes);
      }
    std::uint8_t route = inline_rows;
    return f(route, x.tables);
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    std::uint8_t route = inline_rows;
    if (auto err = f(route)) return err;
    if (route == inline_rows) return f(x.tables);
    if (route != shared_rows) return caf::make_error(caf::sec::invalid_argument, "rows sent by an unknown route");
    SharedRowsReference where;
    if (auto err = f(where.slot.pid, where.slot.fd, where.slot.key, where.slot.slot, where.slot.sequence,
                     where.slot.checksum, where.bytes))
      return err;
    x.tables.clear();
    x.refusal = take_rows_from_shared_memory(where, x.tables);
    return caf::error{};
  } else {
    return f(x.tables);
  }
}

// A shard's answer to a pull (the tables in the pull's order), or its whole tables: rows after
// `version` steps.
struct PulledRows {
  std::uint64_t version = 0;
  std::vector<TableRows> tables;
  bool through_shared_memory = false;  // sent: the asker is on this host (RowPull)
  std::string refusal;                 // arrived: why its rows could not be taken (then it has none)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PulledRows& x) {
  return f(caf::meta::type_name("PulledRows"), x.version, TableRowsRoute{x.tables, x.through_shared_memory, x.refusal});
}

// One worker's row gradients of one batch for the keys one shard holds, computed with the dense weights
// of `version`. Every worker pushes to every shard once a batch, with no tables when its batch touched
// none of the shard's keys, so a sync shard knows when a step has every gradient.
struct RowPush {
  std::uint64_t version = 0;
  std::uint32_t worker = 0;
  std::vector<TableRows> tables;  // ascending tables, each at most once
  // Async: per entry of tables, the sum of squares of the worker's whole gradient of that table, so
  // that each shard clips by the norm of all of it. Sync: none; the shards exchange their parts of the
  // summed gradient's (TableSquares).
  std::vector<double> squares;
  bool through_shared_memory = false;  // sent: the shard is on this host
  std::string refusal;                 // arrived: why its rows could not be taken (then it has none)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RowPush& x) {
  return f(caf::meta::type_name("RowPush"), x.version, x.worker,
           TableRowsRoute{x.tables, x.through_shared_memory, x.refusal}, RawDoubles{x.squares});
}

// What a sync shard tells every other of the step from `version`: the exact sum of squares of its part
// of each table's summed gradient (ExactSquares::word_count words a table, in table order), which the
// others add to theirs for the table's clip norm.
struct TableSquares {
  std::uint64_t version = 0;
  std::uint32_t shard = 0;  // the sender
  std::vector<std::uint64_t> words;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableSquares& x) {
  return f(caf::meta::type_name("TableSquares"), x.version, x.shard, RawWords{x.words});
}

}  // namespace psgrad
