// NumPy .npy arrays: the header parsed and checked, the elements kept as stored and converted on request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

// One array as np.save wrote it: C order, a plain number type (bool, signed or unsigned integers of
// 1 to 8 bytes, floats of 4 or 8 bytes), either byte order.
struct NpyArray {
  std::vector<std::uint64_t> shape;  // () for a scalar
  std::string dtype;                 // as the header spells it, e.g. "|u1", "<f4"
  char kind = 'u';                   // 'b' bool, 'i' signed, 'u' unsigned, 'f' floating point
  std::size_t item_bytes = 1;
  bool big_endian = false;
  std::string bytes;  // the elements, item_bytes each

  std::uint64_t element_count() const;
  // Element i as a double (exact for every type but 64-bit integers beyond 2^53).
  double value(std::size_t i) const;
};

// The largest .npy read (alone or as an .npz member): the same bound as an IDX file.
constexpr std::uint64_t kMaxNpyBytes = std::uint64_t{6} << 30;

// Parses a whole .npy file's bytes; `where` names it in errors ("x.npz: x_train.npy: ...").
Result<NpyArray> parse_npy(std::string bytes, const std::string& where);
// Only the header: the shape and dtype of the array, its bytes left empty.
Result<NpyArray> parse_npy_header(const std::string& leading_bytes, const std::string& where);
// The size of the whole .npy file whose first bytes these are: preamble, header and the elements its
// shape and dtype declare.
Result<std::uint64_t> npy_file_bytes(const std::string& leading_bytes, const std::string& where);
// Reads a .npy file through the bounded reader (only regular files within kMaxNpyBytes).
Result<NpyArray> read_npy_file(const std::string& path);
// Reads only the header of a .npy file.
Result<NpyArray> read_npy_header(const std::string& path);

// The .npy encoding (format 1.0, C order) of an array; the inverse of parse_npy.
std::string npy_bytes(const NpyArray& array);
// Little-endian arrays for writing: unsigned bytes and 32-bit floats.
NpyArray npy_array(std::vector<std::uint64_t> shape, const std::vector<std::uint8_t>& values);
NpyArray npy_array(std::vector<std::uint64_t> shape, const std::vector<float>& values);

}  // namespace psgrad
