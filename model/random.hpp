// A small, seedable, copyable random generator (xoshiro256**) whose whole state can be checkpointed,
// so that data order and dropout masks are reproducible across processes and restarts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace psgrad {

class Random {
 public:
  using State = std::array<std::uint64_t, 4>;

  explicit Random(std::uint64_t seed = 0) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    // splitmix64 expands the seed so that nearby seeds give unrelated streams.
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      word = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, 1) with 24 random bits: enough for dropout masks, and cheaper.
  float uniform_float() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }
  // Uniform integer in [0, n), without modulo bias (Lemire's method).
  std::size_t below(std::size_t n) {
    unsigned __int128 product = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<std::uint64_t>(product);
    if (low < n) {
      const std::uint64_t threshold = -static_cast<std::uint64_t>(n) % n;
      while (low < threshold) {
        product = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::size_t>(product >> 64);
  }

  const State& state() const { return state_; }
  void set_state(const State& state) { state_ = state; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  State state_{};
};

// Separate streams for one run's uses of randomness, so that, e.g., worker 0's data order is not
// drawn from the same sequence as the initial weights.
enum class RandomStream : std::uint64_t { initial_weights = 1, data_order = 2, dropout = 3 };

inline std::uint64_t derive_seed(std::uint64_t seed, RandomStream stream) {
  std::uint64_t z = seed ^ (static_cast<std::uint64_t>(stream) * 0xd1b54a32d192ed03ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace psgrad
