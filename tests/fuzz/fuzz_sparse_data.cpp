// libFuzzer target: arbitrary bytes as a JSON Lines, CSV and TSV file of named columns, and as an apt
// package list (lz4 frames when they start with lz4's magic number, plain text otherwise).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "io/debian_packages.hpp"
#include "io/delimited_examples.hpp"
#include "io/jsonl_examples.hpp"
#include "tests/fuzz/temp_input_file.hpp"

namespace {

// The columns of the seeds (tests/fuzz/fuzz_seeds.cpp), in name order, with small bounds.
const psgrad::SparseLayout kLayout{{{"price", psgrad::ColumnKind::number, std::nullopt},
                                    {"tags", psgrad::ColumnKind::ids, std::nullopt},
                                    {"title", psgrad::ColumnKind::text, std::nullopt},
                                    {"user", psgrad::ColumnKind::ids, 1000}},
                                   "label",
                                   8};

// Every result, error or not, must be well-formed; the sanitizers catch everything else.
void check(const psgrad::Result<psgrad::SparseDataset>& data) {
  if (!data) {
    if (data.error().empty()) std::abort();
    return;
  }
  if (data->count == 0 || data->labels.size() != data->count) std::abort();
  if (data->numbers.size() != data->count * data->number_width()) std::abort();
  for (const auto label : data->labels)
    if (label >= data->num_classes()) std::abort();
  for (const auto& field : data->id_fields) {
    if (field.examples() != data->count || field.offsets.front() != 0 || field.offsets.back() != field.ids.size())
      std::abort();
    for (std::size_t e = 0; e < data->count; ++e)
      if (field.offsets[e] > field.offsets[e + 1] || field.length(e) > kLayout.max_tokens) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static psgrad::fuzz::TempInputFile file("input.data");
  const auto& path = file.write(data, size);
  check(psgrad::read_jsonl_examples(path, kLayout));
  check(psgrad::read_delimited_examples(path, kLayout, ','));
  check(psgrad::read_delimited_examples(path, kLayout, '\t'));
  auto counts = psgrad::read_package_lists({path}, [](const psgrad::PackageRecord& record) {
    if (record.name.empty() || record.section.empty()) std::abort();
    if (psgrad::package_json_line(record).back() != '\n') std::abort();
    return psgrad::success();
  });
  if (!counts && counts.error().empty()) std::abort();
  return 0;
}
