// The messages that bring embedding table shard processes, and the worker processes of a model with tables,
// into a run: the tables' layout each must share with the server, how a shard starts, and the atoms of its
// hello and join.
#pragma once

#include <cstdint>

#include "caf/atom.hpp"
#include "caf/meta/type_name.hpp"
#include "model/table_layout.hpp"

namespace psgrad {

using table_hello_atom = caf::atom_constant<caf::atom("tablehello")>;
using table_join_atom = caf::atom_constant<caf::atom("tablejoin")>;
using table_shards_atom = caf::atom_constant<caf::atom("tshards")>;
using table_start_atom = caf::atom_constant<caf::atom("tablestart")>;
using table_rows_atom = caf::atom_constant<caf::atom("tablerows")>;

// What a table shard process learns before it makes its shard: whether the server takes checkpoints (a
// sync shard then holds each checkpoint point's step until it has been read), and, when the run resumes a
// checkpoint, the iteration and version it starts at and how many pieces its part of the rows comes in.
struct TableShardStart {
  bool checkpoints = false;
  bool resume = false;
  std::uint64_t start_iteration = 0;
  std::uint64_t version = 0;
  std::uint32_t pieces = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableShardStart& x) {
  return f(caf::meta::type_name("TableShardStart"), x.checkpoints, x.resume, x.start_iteration, x.version,
           x.pieces);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableShape& x) {
  return f(caf::meta::type_name("TableShape"), x.rows, x.width, x.hash_seed, x.init_seed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TableLayout& x) {
  return f(caf::meta::type_name("TableLayout"), x.dense_hash, x.tables);
}

}  // namespace psgrad
