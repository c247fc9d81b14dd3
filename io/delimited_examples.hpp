// CSV and TSV files of examples with named columns: a header row names the columns, each later row is
// one example.
#pragma once

#include <cstdint>
#include <string>

#include "io/sparse_example_builder.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

// Reads a header row, then one example per row; delimiter ',' (CSV) or '\t' (TSV), RFC 4180 quoting.
// The header must name every declared column and the label; other columns are skipped. Per cell:
// "ids" holds whitespace-separated ids, a token of digits an integer id and any other a string
// (string-hashed); "text" is split on whitespace; "number" is one number. An empty cell gives an ids or
// text column no ids. A label of digits is a whole-number label, any other a string. Errors are one
// line: "<path>:<line>: column "<name>": ...".
Result<SparseDataset> read_delimited_examples(const std::string& path, const SparseLayout& layout, char delimiter);

}  // namespace psgrad
