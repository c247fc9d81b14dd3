// libFuzzer target: arbitrary bytes as a .npy array, an .npz archive and a CSV file of examples.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "io/csv_examples.hpp"
#include "io/npy_array.hpp"
#include "io/npz_archive.hpp"
#include "tests/fuzz/temp_input_file.hpp"

namespace {

// Every result, error or not, must be well-formed; the sanitizers catch everything else.
template <class T>
void check_error(const psgrad::Result<T>& result) {
  if (!result && result.error().empty()) std::abort();
}

void check_examples(const psgrad::Result<psgrad::LabeledExamples>& examples, bool labelled) {
  check_error(examples);
  if (!examples) return;
  if (examples->inputs.size() != examples->count * examples->width) std::abort();
  if (labelled && examples->labels.size() != examples->count) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static psgrad::fuzz::TempInputFile file("input.data");
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (auto array = psgrad::parse_npy(bytes, "input.npy")) {
    if (array->bytes.size() != array->element_count() * array->item_bytes) std::abort();
    for (std::size_t i = 0; i < array->element_count(); ++i) (void)array->value(i);
  } else if (array.error().empty()) {
    std::abort();
  }
  const auto& path = file.write(data, size);
  check_examples(psgrad::read_csv_examples(path, psgrad::CsvLayout{0, 1.0}), true);
  check_examples(psgrad::read_csv_examples(path, psgrad::CsvLayout{-1, 0.5}), true);
  check_examples(psgrad::read_csv_examples(path, psgrad::CsvLayout{std::nullopt, 1.0}), false);
  if (auto archive = psgrad::NpzArchive::open(path)) {
    for (const auto& name : archive->names()) {
      check_error(archive->read(name));
      check_error(archive->read_header(name));
    }
  } else if (archive.error().empty()) {
    std::abort();
  }
  return 0;
}
