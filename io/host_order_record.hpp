// Fixed-order binary records in host byte order, as checkpoint files hold them: a writer appending
// numbers, texts and arrays with their counts, and a reader that refuses to read past its bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "model/random.hpp"

namespace psgrad {

class HostOrderWriter {
 public:
  template <class T>
  void number(T x) {
    static_assert(std::is_arithmetic<T>::value, "numbers only");
    const auto* bytes = reinterpret_cast<const char*>(&x);
    data_.insert(data_.end(), bytes, bytes + sizeof x);
  }
  void text(std::string_view s) {
    number<std::uint64_t>(s.size());
    data_.insert(data_.end(), s.begin(), s.end());
  }
  // A count, then the values' bytes.
  template <class T>
  void array(const std::vector<T>& values) {
    static_assert(std::is_arithmetic<T>::value, "numbers only");
    number<std::uint64_t>(values.size());
    const auto* bytes = reinterpret_cast<const char*>(values.data());
    data_.insert(data_.end(), bytes, bytes + values.size() * sizeof(T));
  }
  void floats(const std::vector<float>& values) { array(values); }
  void state(const Random::State& s) {
    for (auto word : s) number(word);
  }
  void raw(const char* p, std::size_t n) { data_.insert(data_.end(), p, p + n); }
  const std::vector<char>& data() const { return data_; }
  std::string_view view() const { return std::string_view(data_.data(), data_.size()); }

 private:
  std::vector<char> data_;
};

class HostOrderReader {
 public:
  // max_items: the most values an array may declare, so a corrupt count cannot ask for absurd memory.
  HostOrderReader(std::string_view data, std::uint64_t max_items) : data_(data), max_items_(max_items) {}
  template <class T>
  bool number(T& x) {
    if (data_.size() - position_ < sizeof x) return false;
    std::memcpy(&x, data_.data() + position_, sizeof x);
    position_ += sizeof x;
    return true;
  }
  bool text(std::string& s) {
    std::uint64_t n = 0;
    if (!number(n) || n > data_.size() - position_) return false;
    s.assign(data_.data() + position_, n);
    position_ += n;
    return true;
  }
  // A view of the next n bytes, which stay the caller's to read.
  bool bytes(std::string_view& out, std::uint64_t n) {
    if (n > data_.size() - position_) return false;
    out = data_.substr(position_, n);
    position_ += n;
    return true;
  }
  template <class T>
  bool array(std::vector<T>& values) {
    std::uint64_t n = 0;
    if (!number(n) || n > max_items_ || n * sizeof(T) > data_.size() - position_) return false;
    values.resize(n);
    // An empty vector's data() may be null, and memcpy from or to null is undefined even for 0 bytes.
    if (n > 0) std::memcpy(values.data(), data_.data() + position_, n * sizeof(T));
    position_ += n * sizeof(T);
    return true;
  }
  bool floats(std::vector<float>& values) { return array(values); }
  bool state(Random::State& s) {
    for (auto& word : s)
      if (!number(word)) return false;
    return true;
  }
  bool raw(char* p, std::size_t n) {
    if (data_.size() - position_ < n) return false;
    std::memcpy(p, data_.data() + position_, n);
    position_ += n;
    return true;
  }
  bool at_end() const { return position_ == data_.size(); }

 private:
  std::string_view data_;
  std::uint64_t max_items_;
  std::size_t position_ = 0;
};

}  // namespace psgrad
