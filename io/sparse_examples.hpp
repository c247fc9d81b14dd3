// Examples of named columns ([data.columns]) from a JSON Lines, CSV or TSV file, the format told by
// the file's name.
#pragma once

#include <string>

#include "io/config.hpp"
#include "io/sparse_example_builder.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

// The [data] keys a named-column reader takes.
SparseLayout sparse_layout(const DataSection& data);

// .csv: CSV; .tsv or .tab: TSV; .jsonl, .ndjson or .json: JSON Lines; any other name: JSON Lines when
// the file starts with '{', else refused with the names it could have.
Result<SparseDataset> read_sparse_examples(const std::string& path, const SparseLayout& layout);

}  // namespace psgrad
