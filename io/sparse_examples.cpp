// Picks the named-column reader by file name, or by a JSON object's opening brace.
#include "io/sparse_examples.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

#include "io/bounded_file.hpp"
#include "io/delimited_examples.hpp"
#include "io/jsonl_examples.hpp"

namespace psgrad {

namespace {

// The first byte that is not blank, or '\0' when there is none (or the file cannot be read: the reader
// then says why).
char first_visible_byte(const std::string& path) {
  auto file = open_checked_file(path, "data file", kMaxJsonlBytes);
  if (!file) return '\0';
  char buffer[256];
  const auto got = ::read(file->fd(), buffer, sizeof buffer);
  for (ssize_t i = 0; i < got; ++i)
    if (buffer[i] != ' ' && buffer[i] != '\t' && buffer[i] != '\r' && buffer[i] != '\n') return buffer[i];
  return '\0';
}

}  // namespace

SparseLayout sparse_layout(const DataSection& data) { return SparseLayout{data.columns, data.label, data.max_tokens}; }

Result<SparseDataset> read_sparse_examples(const std::string& path, const SparseLayout& layout) {
  const auto extension = std::filesystem::path(path).extension().string();
  if (extension == ".csv") return read_delimited_examples(path, layout, ',');
  if (extension == ".tsv" || extension == ".tab") return read_delimited_examples(path, layout, '\t');
  if (extension == ".jsonl" || extension == ".ndjson" || extension == ".json" || first_visible_byte(path) == '{')
    return read_jsonl_examples(path, layout);
  if (auto missing = missing_path(path)) return *missing;
  return Error{fmt::format("{}: cannot tell its format: named columns are read from JSON Lines (.jsonl, a JSON object "
                           "per line), CSV (.csv) or TSV (.tsv) files",
                           path)};
}

}  // namespace psgrad
