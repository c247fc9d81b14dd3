// A vector of numbers sent as raw bits (a fixed-size count, then the values' bytes). Doubles, for fields
// like Gradients::foreign_squares: CAF 0.17 writes doubles with its own pack754, which garbles NaN and
// infinity, and a diverging gradient's sum of squares is one of them. Worker lists: CAF's own sequence
// count is a variable-length integer with more than one spelling, so a payload would not re-encode to
// the bytes it came from.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "caf/deserializer.hpp"
#include "caf/error.hpp"
#include "caf/sec.hpp"
#include "caf/serializer.hpp"
#include "payloads/float_buffer.hpp"

namespace psgrad {

template <class Value>
struct RawVector {
  std::vector<Value>& values;
};
using RawDoubles = RawVector<double>;
using RawWorkers = RawVector<std::uint32_t>;

template <class Inspector, class Value>
typename Inspector::result_type inspect(Inspector& f, RawVector<Value> x) {
  static_assert(std::is_arithmetic<Value>::value, "raw values are numbers");
  static_assert(sizeof(double) == 8, "doubles cross the wire as 8 bytes");
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    std::uint64_t count = x.values.size();
    if (auto err = f(count)) return err;
    if (count == 0) return caf::error{};
    return f.apply_raw(count * sizeof(Value), x.values.data());
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    std::uint64_t count = 0;
    if (auto err = f(count)) return err;
    // Refused before allocating, as for float buffers.
    if (count > max_float_buffer_size || !wire_detail::fits_message(f, count * sizeof(Value)))
      return caf::make_error(caf::sec::invalid_argument, "vector larger than its message");
    x.values.resize(count);
    if (count == 0) return caf::error{};
    return f.apply_raw(count * sizeof(Value), x.values.data());
  } else {
    return f(x.values);
  }
}

}  // namespace psgrad
