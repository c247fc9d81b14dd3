// JSON Lines files of examples with named columns: one JSON object per line, its keys the columns.
#pragma once

#include <cstdint>
#include <string>

#include "io/sparse_example_builder.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

// The largest file and the longest line read. A line is one example: a few thousand tokens of text
// and ids take far less than the bound, which refuses a file without newlines as soon as that much is read.
constexpr std::uint64_t kMaxJsonlBytes = std::uint64_t{6} << 30;
constexpr std::size_t kMaxJsonlLineBytes = std::size_t{8} << 20;

// Reads every non-blank line as one example. Per declared column: "ids" takes an integer of 0 to
// 2^64 - 1, a string (string-hashed) or a list of them; "text" a string; "number" a number; null
// gives an ids or text column no ids. The label is a string or a whole number. Keys not declared are
// skipped whatever they hold. Errors are one line: "<path>:<line>: column "<name>": ...".
Result<SparseDataset> read_jsonl_examples(const std::string& path, const SparseLayout& layout);

}  // namespace psgrad
