// A batch's rows between a worker (or the evaluator) and the table shards: one pull per shard with the
// keys it holds (key % shards), the rows joined back in each field's key order from the answers, and one
// push per shard with the gradients of its keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/hashembed.hpp"
#include "model/result.hpp"
#include "model/sparse_model.hpp"
#include "model/sparse_rows.hpp"
#include "payloads/sparse_messages.hpp"

namespace psgrad {

// Per shard, the pull of the keys it holds, tables in field order; one with no tables is not worth sending.
std::vector<RowPull> split_pull(const BatchLookup& lookup, std::size_t shards, std::uint64_t version,
                                bool evaluation);

// Per field, the rows of lookup.fields[f].keys from the shards' answers (answers[s] from shard s, empty
// for a shard that was not asked). An error names the shard whose answer does not fit what it was asked.
Result<std::vector<SparseRows>> join_pulled(const BatchLookup& lookup, const std::vector<HashEmbedSpec>& fields,
                                            const std::vector<PulledRows>& answers);

// Per shard, a worker's push of the gradients of the keys it holds (per field, in field order; one
// without tables when the batch touched none of its keys). With squares (async), each table's entry
// carries the sum of squares of the worker's whole gradient of that table.
std::vector<RowPush> split_push(std::uint64_t version, std::uint32_t worker, const std::vector<SparseRows>& gradients,
                                std::size_t shards, bool with_squares);

// Every shard's whole tables joined, per table in key order (width per table from `widths`).
std::vector<SparseRows> join_tables(const std::vector<PulledRows>& shards, const std::vector<std::size_t>& widths);

}  // namespace psgrad
