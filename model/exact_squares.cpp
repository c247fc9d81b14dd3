#include "model/exact_squares.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace psgrad {

namespace {

constexpr std::uint64_t infinity_flag = 1;
constexpr std::uint64_t nan_flag = 2;
// The sum counts units of 2^-298, the square of the smallest float's last bit.
constexpr int unit_exponent = -298;

}  // namespace

void ExactSquares::add_shifted(unsigned __int128 value, std::size_t shift) {
  const std::size_t limb = shift / 64;
  const unsigned offset = shift % 64;
  const auto low = static_cast<std::uint64_t>(value);
  const auto high = static_cast<std::uint64_t>(value >> 64);
  const std::uint64_t words[3] = {low << offset, (high << offset) | (offset ? low >> (64 - offset) : 0),
                                  offset ? high >> (64 - offset) : 0};
  std::uint64_t carry = 0;
  for (std::size_t i = limb; i < limb_count; ++i) {
    const std::uint64_t word = i - limb < 3 ? words[i - limb] : 0;
    if (i - limb >= 3 && carry == 0) break;
    const unsigned __int128 sum = static_cast<unsigned __int128>(limbs_[i]) + word + carry;
    limbs_[i] = static_cast<std::uint64_t>(sum);
    carry = static_cast<std::uint64_t>(sum >> 64);
  }
}

void ExactSquares::add(const float* values, std::size_t size) {
  // Squares of one binary exponent share their scale: their mantissas' squares (under 2^48 each) are
  // added as integers per exponent, and each exponent's total is shifted into the limbs once.
  unsigned __int128 by_exponent[255] = {};
  for (std::size_t i = 0; i < size; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    std::uint32_t exponent = (bits >> 23) & 0xffu;
    std::uint64_t mantissa = bits & 0x7fffffu;
    if (exponent == 0xffu) {
      flags_ |= mantissa != 0 ? nan_flag : infinity_flag;
      continue;
    }
    if (exponent == 0) exponent = 1;  // subnormal: the smallest exponent, no hidden bit
    else mantissa |= 0x800000u;
    by_exponent[exponent] += mantissa * mantissa;
  }
  // x = mantissa * 2^(exponent - 150), so x^2 is mantissa^2 units of 2^(2 exponent - 300), or
  // 2^(2 exponent - 2) units of the sum.
  for (std::size_t exponent = 1; exponent < 255; ++exponent)
    if (by_exponent[exponent] != 0) add_shifted(by_exponent[exponent], 2 * exponent - 2);
}

void ExactSquares::add(const ExactSquares& other) {
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < limb_count; ++i) {
    const unsigned __int128 sum = static_cast<unsigned __int128>(limbs_[i]) + other.limbs_[i] + carry;
    limbs_[i] = static_cast<std::uint64_t>(sum);
    carry = static_cast<std::uint64_t>(sum >> 64);
  }
  flags_ |= other.flags_;
}

double ExactSquares::value() const {
  if (flags_ & nan_flag) return std::numeric_limits<double>::quiet_NaN();
  if (flags_ & infinity_flag) return std::numeric_limits<double>::infinity();
  std::size_t top = limb_count;
  while (top > 0 && limbs_[top - 1] == 0) --top;
  if (top == 0) return 0.0;
  if (top == 1) return std::ldexp(static_cast<double>(limbs_[0]), unit_exponent);  // exact until rounded here
  // The 64 bits from the highest set one down, with any lower set bit folded into the last: it lies
  // below the 53 a double keeps, so the conversion's round to nearest even sees it as "above half".
  const std::size_t highest = (top - 1) * 64 + (63 - static_cast<std::size_t>(__builtin_clzll(limbs_[top - 1])));
  const std::size_t first = highest - 63;
  const std::size_t limb = first / 64;
  const unsigned offset = first % 64;
  std::uint64_t bits = offset == 0 ? limbs_[limb] : (limbs_[limb] >> offset) | (limbs_[limb + 1] << (64 - offset));
  bool below = offset != 0 && (limbs_[limb] & ((std::uint64_t{1} << offset) - 1)) != 0;
  for (std::size_t i = 0; i < limb && !below; ++i) below = limbs_[i] != 0;
  if (below) bits |= 1;
  return std::ldexp(static_cast<double>(bits), static_cast<int>(first) + unit_exponent);
}

void ExactSquares::append_words(std::vector<std::uint64_t>& words) const {
  words.insert(words.end(), limbs_.begin(), limbs_.end());
  words.push_back(flags_);
}

bool ExactSquares::from_words(const std::uint64_t* words, std::size_t count, ExactSquares& out) {
  if (count != word_count || words[limb_count] > (infinity_flag | nan_flag)) return false;
  std::copy(words, words + limb_count, out.limbs_.begin());
  out.flags_ = words[limb_count];
  return true;
}

}  // namespace psgrad
