#include "model/parameter_layout.hpp"

#include <fmt/format.h>

#include "model/fnv1a.hpp"

namespace psgrad {

std::size_t ParameterLayout::add(std::string layer, std::string name, std::size_t rows,
                                 std::size_t cols) {
  arrays_.push_back(ParameterArray{std::move(layer), std::move(name), rows, cols, total_size_});
  total_size_ += rows * cols;
  return arrays_.size() - 1;
}

namespace {
void mix_number(std::uint64_t& hash, std::uint64_t x) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(x >> (8 * i));
  hash = fnv1a(bytes, 8, hash);
}
}  // namespace

std::optional<std::string> ParameterLayout::mismatch(std::uint64_t stamped, std::size_t size) const {
  if (size == total_size_ && (stamped == 0 || stamped == hash())) return std::nullopt;
  return fmt::format("{} floats, layout {:016x}; expected {} floats, layout {:016x}", size, stamped, total_size_,
                     hash());
}

std::optional<std::string> ParameterLayout::mismatch(std::uint64_t stamped, std::size_t size, std::size_t begin,
                                                     std::size_t end) const {
  if (begin == 0 && end == total_size_) return mismatch(stamped, size);
  if (size == end - begin && (stamped == 0 || stamped == hash())) return std::nullopt;
  return fmt::format("{} floats, layout {:016x}; expected the {} floats [{}, {}) of layout {:016x}", size, stamped,
                     end - begin, begin, end, hash());
}

std::uint64_t ParameterLayout::hash() const {
  std::uint64_t hash = fnv1a_offset_basis;
  for (const auto& array : arrays_) {
    hash = fnv1a(array.layer.data(), array.layer.size(), hash);
    hash = fnv1a("\0", 1, hash);
    hash = fnv1a(array.name.data(), array.name.size(), hash);
    hash = fnv1a("\0", 1, hash);
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
