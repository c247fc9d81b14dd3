// The message a table shard answers a checkpoint with: its part of every table, rows and row optimizer
// state, as raw bytes with fixed-size counts (8 bytes a key and a step count, 4 a float).
#pragma once

#include "caf/atom.hpp"
#include "caf/meta/type_name.hpp"
#include "model/checkpoint.hpp"
#include "payloads/raw_vector.hpp"

namespace psgrad {

// (table_state_atom, version): a shard's ShardTablesState once it has taken `version` steps (sync: at
// exactly that version, which it holds at the run's checkpoint points until asked).
using table_state_atom = caf::atom_constant<caf::atom("tablestate")>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableState& x) {
  return f(caf::meta::type_name("TableState"), x.width, x.state_width, RawVector<std::uint64_t>{x.keys},
           RawVector<float>{x.rows}, RawVector<float>{x.state}, RawVector<std::uint64_t>{x.steps});
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ShardTablesState& x) {
  return f(caf::meta::type_name("ShardTablesState"), x.index, x.count, x.version, x.tables);
}

}  // namespace psgrad
