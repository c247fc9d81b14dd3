// The sum of squares of floats, exact, rounded to double once: the same bits whatever order the values
// come in and however they are split between holders, so table shards can add their parts of a clip norm.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace psgrad {

// The square of a float is exact in double, and a multiple of 2^-298 below 2^256; the sum is kept as an
// integer count of 2^-298 in limb_count 64-bit limbs, which no number of squares a message can hold
// overflows. Infinity and NaN are kept aside as flags, so a diverging gradient still reads as one.
class ExactSquares {
 public:
  static constexpr std::size_t limb_count = 10;
  static constexpr std::size_t word_count = limb_count + 1;  // the limbs, then the flags

  ExactSquares() = default;
  ExactSquares(const float* values, std::size_t size) { add(values, size); }

  void add(const float* values, std::size_t size);
  void add(const ExactSquares& other);

  // The sum rounded to the nearest double (ties to even); NaN when a value was NaN, else infinity when
  // a value was infinite.
  double value() const;

  // Its state as words, for messages; from_words refuses a wrong count.
  void append_words(std::vector<std::uint64_t>& words) const;
  static bool from_words(const std::uint64_t* words, std::size_t count, ExactSquares& out);

  bool operator==(const ExactSquares& other) const { return limbs_ == other.limbs_ && flags_ == other.flags_; }

 private:
  void add_shifted(unsigned __int128 value, std::size_t shift);

  std::array<std::uint64_t, limb_count> limbs_{};
  std::uint64_t flags_ = 0;  // bit 0: an infinity was added, bit 1: a NaN
};

}  // namespace psgrad
