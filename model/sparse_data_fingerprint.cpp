#include "model/sparse_data_fingerprint.hpp"

#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

template <class T>
std::uint64_t hash_values(const std::vector<T>& values, std::uint64_t hash) {
  const std::uint64_t size = values.size();
  hash = fnv1a(&size, sizeof size, hash);
  return values.empty() ? hash : fnv1a(values.data(), values.size() * sizeof(T), hash);
}

std::uint64_t hash_text(const std::string& text, std::uint64_t hash) {
  const std::uint64_t size = text.size();
  return fnv1a(text.data(), text.size(), fnv1a(&size, sizeof size, hash));
}

}  // namespace

DataFingerprint fingerprint_of(const SparseDataset& data, std::string name) {
  DataFingerprint print;
  print.name = std::move(name);
  print.count = data.count;
  print.width = data.id_fields.size() + data.number_names.size();
  print.num_classes = data.num_classes();
  std::uint64_t inputs = fnv1a_offset_basis;
  for (const auto& field : data.id_fields) {
    inputs = hash_text(field.name, inputs);
    inputs = hash_values(field.offsets, inputs);
    inputs = hash_values(field.ids, inputs);
  }
  for (const auto& column : data.number_names) inputs = hash_text(column, inputs);
  print.images_hash = hash_values(data.numbers, inputs);
  std::uint64_t labels = hash_values(data.labels, fnv1a_offset_basis);
  for (const auto& label : data.class_names) labels = hash_text(label, labels);
  print.labels_hash = labels;
  return print;
}

}  // namespace psgrad
