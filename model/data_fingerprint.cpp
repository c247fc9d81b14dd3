// Four interleaved FNV-1a chains over 64-bit words: the same spirit as model/fnv1a.hpp, fast enough to
// hash Fashion-MNIST's 188 MB of inputs at every load without being noticed.
#include "model/data_fingerprint.hpp"

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

std::uint64_t wide_hash(const void* data, std::size_t size) {
  constexpr std::uint64_t prime = 1099511628211ull;
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::array<std::uint64_t, 4> lanes = {fnv1a_offset_basis, fnv1a_offset_basis ^ 1, fnv1a_offset_basis ^ 2,
                                        fnv1a_offset_basis ^ 3};
  std::size_t offset = 0;
  for (; offset + 32 <= size; offset += 32)
    for (std::size_t lane = 0; lane < 4; ++lane) {
      std::uint64_t word;
      std::memcpy(&word, bytes + offset + 8 * lane, 8);
      lanes[lane] = (lanes[lane] ^ word) * prime;
    }
  auto hash = fnv1a(bytes + offset, size - offset);
  for (const auto lane : lanes) hash = fnv1a(&lane, sizeof lane, hash);
  return fnv1a(&size, sizeof size, hash);
}

std::string describe(const DataFingerprint& data) {
  return fmt::format("{} ({} examples, inputs {}, labels {})", data.name, data.count, hash_hex(data.images_hash),
                     hash_hex(data.labels_hash));
}

}  // namespace

DataFingerprint fingerprint_of(const Dataset& data, std::string name) {
  DataFingerprint fingerprint;
  fingerprint.name = std::move(name);
  fingerprint.count = data.count;
  fingerprint.width = data.width;
  fingerprint.num_classes = data.num_classes;
  fingerprint.images_hash = wide_hash(data.input_data(), data.input_size() * sizeof(float));
  fingerprint.labels_hash = wide_hash(data.labels.data(), data.labels.size());
  return fingerprint;
}

std::optional<std::string> data_difference(const DataFingerprint& ours, const DataFingerprint& theirs,
                                           std::string_view our_side, std::string_view their_side) {
  const bool same_images = ours.images_hash == theirs.images_hash;
  const bool same_labels = ours.labels_hash == theirs.labels_hash;
  if (ours.count == theirs.count && ours.width == theirs.width && ours.num_classes == theirs.num_classes &&
      same_images && same_labels)
    return std::nullopt;
  const char* what = ours.count != theirs.count ? "another number of examples"
                     : !same_images             ? "other inputs"
                                                : "the same inputs with other labels";
  return fmt::format("training data differs from the {}'s ({}): {} {}, {} {}", their_side, what, our_side,
                     describe(ours), their_side, describe(theirs));
}

}  // namespace psgrad
