#include "model/parameter_layout.hpp"

#include <fmt/format.h>

namespace psgrad {

std::size_t ParameterLayout::add(std::string layer, std::string name, std::size_t rows,
                                 std::size_t cols) {
  arrays_.push_back(ParameterArray{std::move(layer), std::move(name), rows, cols, total_size_});
  total_size_ += rows * cols;
  return arrays_.size() - 1;
}

namespace {
void mix(std::uint64_t& hash, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
}
void mix_number(std::uint64_t& hash, std::uint64_t x) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(x >> (8 * i));
  mix(hash, bytes, 8);
}
}  // namespace

std::uint64_t ParameterLayout::hash() const {
  std::uint64_t hash = 14695981039346656037ull;
  for (const auto& array : arrays_) {
    mix(hash, array.layer.data(), array.layer.size());
    mix(hash, "\0", 1);
    mix(hash, array.name.data(), array.name.size());
    mix(hash, "\0", 1);
    mix_number(hash, array.rows);
    mix_number(hash, array.cols);
    mix_number(hash, array.offset);
  }
  return hash;
}

std::string ParameterLayout::describe() const {
  std::string text;
  for (const auto& array : arrays_)
    text += fmt::format("{}.{} {}x{} @{}\n", array.layer, array.name, array.rows, array.cols,
                        array.offset);
  return text;
}

}  // namespace psgrad
