// Examples whose inputs are bags of uint64 ids (a text's hashed tokens, a record's categories) per
// field, optional numeric columns and a class label: plain data, as a reader fills it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace psgrad {

// One field's ids for every example, as Thinc's Ragged holds them: all ids in one array and where each
// example's bag starts. An example may have an empty bag.
struct IdField {
  std::string name;  // the column it was read from
  std::vector<std::size_t> offsets{0};  // examples + 1 entries: example e is ids[offsets[e], offsets[e + 1])
  std::vector<std::uint64_t> ids;

  std::size_t examples() const { return offsets.size() - 1; }
  std::size_t length(std::size_t example) const { return offsets[example + 1] - offsets[example]; }
  const std::uint64_t* bag(std::size_t example) const { return ids.data() + offsets[example]; }
};

struct SparseDataset {
  std::size_t count = 0;
  std::vector<IdField> id_fields;         // each with count bags
  std::vector<std::string> number_names;  // the numeric columns, in their order within a row of numbers
  std::vector<float> numbers;             // count x number_names.size(), row-major
  // Each example's class, an index into class_names. String labels are numbered in sorted (byte) order
  // of their names, so the same label set gives the same classes whatever order the file lists them in;
  // integer labels are their own class, and class_names are then "0", "1", ... up to the largest.
  std::vector<std::uint32_t> labels;
  std::vector<std::string> class_names;  // kept so a saved model can name the class it predicts
  std::string origin;                    // the file they came from, for messages

  std::size_t num_classes() const { return class_names.size(); }
  std::size_t number_width() const { return number_names.size(); }
  const float* number_row(std::size_t example) const { return numbers.data() + example * number_names.size(); }
};

}  // namespace psgrad
