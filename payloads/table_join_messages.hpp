// The messages that bring embedding table shard processes and sparse worker processes into a run: the
// tables' layout each must share with the server, and the atoms of the table shards' hello and join.
#pragma once

#include "caf/atom.hpp"
#include "caf/meta/type_name.hpp"
#include "model/table_layout.hpp"

namespace psgrad {

using table_hello_atom = caf::atom_constant<caf::atom("tablehello")>;
using table_join_atom = caf::atom_constant<caf::atom("tablejoin")>;
using table_shards_atom = caf::atom_constant<caf::atom("tshards")>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableShape& x) {
  return f(caf::meta::type_name("TableShape"), x.rows, x.width, x.hash_seed, x.init_seed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableLayout& x) {
  return f(caf::meta::type_name("TableLayout"), x.dense_hash, x.tables);
}

}  // namespace psgrad
