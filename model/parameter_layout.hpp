// Where each parameter array lives in a model's one contiguous buffer, and a hash two processes compare.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace psgrad {

struct ParameterArray {
  std::string layer;  // e.g. "relu1"
  std::string name;   // "W" or "b"
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t offset = 0;  // in floats from the start of the buffer
  std::size_t size() const { return rows * cols; }
};

class ParameterLayout {
 public:
  // Appends an array and returns its index.
  std::size_t add(std::string layer, std::string name, std::size_t rows, std::size_t cols);

  const std::vector<ParameterArray>& arrays() const { return arrays_; }

  // The one check every receiver of weights or gradients makes (worker, server, evaluator, resume,
  // model saving): whether a buffer of `size` floats stamped with layout `hash` was laid out by this
  // layout. Empty when it was; else what differs, for the receiver's one-line error. hash 0: unstamped.
  std::optional<std::string> mismatch(std::uint64_t hash, std::size_t size) const;
  // The same for the floats [begin, end) of such a buffer (what a server shard holds and receives).
  std::optional<std::string> mismatch(std::uint64_t hash, std::size_t size, std::size_t begin, std::size_t end) const;
  const ParameterArray& operator[](std::size_t i) const { return arrays_[i]; }
  std::size_t array_count() const { return arrays_.size(); }
  std::size_t total_size() const { return total_size_; }

  // FNV-1a over names, shapes and offsets: equal hashes mean the same layout.
  std::uint64_t hash() const;
  // One line per array: "relu1.W 128x784 @0".
  std::string describe() const;

  bool operator==(const ParameterLayout& other) const { return hash() == other.hash(); }

 private:
  std::vector<ParameterArray> arrays_;
  std::size_t total_size_ = 0;
};

}  // namespace psgrad
