// The .npy format: a magic string, a version, a Python dict literal describing the array, the raw elements.
// Written by hand rather than through xtensor's load_npy, which needs the element type at compile time,
// throws on a mismatch, and would still leave the header to be read here to learn that type.
#include "io/npy_array.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <new>

#include <fmt/format.h>
#include <unistd.h>

#include "io/bounded_file.hpp"
#include "io/machine_memory.hpp"

namespace psgrad {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;
// np.save pads the header to a multiple of 64 bytes; a real one is under 200. A megabyte refuses a
// hostile length without refusing anything numpy writes.
constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 20;
constexpr std::uint64_t kMaxDimension = std::uint64_t{1} << 40;

Error fault(const std::string& where, const std::string& what) { return Error{fmt::format("{}: {}", where, what)}; }

// A cursor over the header's dict literal, which is all the Python syntax np.save writes there:
// {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& where) : text_(text), where_(where) {}

  Result<NpyArray> parse() {
    NpyArray array;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    if (!take('{')) return broken("does not start with '{'");
    for (;;) {
      skip_space();
      if (take('}')) break;
      auto key = string_literal();
      if (!key) return Error{key.error()};
      skip_space();
      if (!take(':')) return broken(fmt::format("no ':' after '{}'", *key));
      skip_space();
      if (*key == "descr") {
        if (peek() == '[') return fault(where_, "structured arrays (a dtype with fields) are not supported; save "
                                                "plain numbers");
        auto descr = string_literal();
        if (!descr) return Error{descr.error()};
        if (auto typed = set_dtype(array, *descr); !typed) return Error{typed.error()};
        have_descr = true;
      } else if (*key == "fortran_order") {
        if (take_word("True"))
          return fault(where_, "Fortran-ordered arrays are not supported; save np.ascontiguousarray(x)");
        if (!take_word("False")) return broken("fortran_order is neither True nor False");
        have_order = true;
      } else if (*key == "shape") {
        auto shape = shape_tuple();
        if (!shape) return Error{shape.error()};
        array.shape = std::move(*shape);
        have_shape = true;
      } else {
        return broken(fmt::format("unknown key '{}'", *key));
      }
      skip_space();
      if (take(',')) continue;
      skip_space();
      if (take('}')) break;
      return broken("expected ',' or '}'");
    }
    if (!have_descr || !have_order || !have_shape) return broken("lacks one of 'descr', 'fortran_order', 'shape'");
    return array;
  }

 private:
  Error broken(const std::string& what) const {
    return fault(where_, fmt::format("bad .npy header ({}): {}", what, printable_prefix()));
  }

  std::string printable_prefix() const {
    std::string shown;
    for (char c : text_.substr(0, 120)) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    return shown;
  }

  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  bool take(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  bool take_word(const char* word) {
    const std::size_t length = std::strlen(word);
    if (text_.compare(at_, length, word) != 0) return false;
    at_ += length;
    return true;
  }
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  Result<std::string> string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return broken("expected a quoted string");
    ++at_;
    const auto end = text_.find(quote, at_);
    if (end == std::string::npos) return broken("unterminated string");
    std::string value = text_.substr(at_, end - at_);
    at_ = end + 1;
    return value;
  }

  Result<std::vector<std::uint64_t>> shape_tuple() {
    if (!take('(')) return broken("shape is not a tuple");
    std::vector<std::uint64_t> shape;
    for (;;) {
      skip_space();
      if (take(')')) return shape;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) return broken("shape holds something other than sizes");
      std::uint64_t size = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        size = size * 10 + static_cast<std::uint64_t>(text_[at_++] - '0');
        if (size > kMaxDimension) return fault(where_, fmt::format("shape has a size beyond {}", kMaxDimension));
      }
      take('L');  // Python 2 wrote long integers as 60000L
      shape.push_back(size);
      skip_space();
      if (take(',')) continue;
      skip_space();
      if (take(')')) return shape;
      return broken("expected ',' or ')' in shape");
    }
  }

  Status set_dtype(NpyArray& array, const std::string& descr) {
    // "<f4": byte order ('<' little, '>' big, '|' not applicable, '=' native), kind, item size.
    const char kind = descr.size() >= 2 ? descr[1] : '?';
    const char* hint = kind == 'O' ? " (Python objects, pickled)" : kind == 'U' || kind == 'S' ? " (text)" : "";
    if (descr.size() < 3 || std::string("<>|=").find(descr[0]) == std::string::npos)
      return fault(where_, fmt::format("unsupported dtype '{}'{}; expected bool, integers or float32/float64", descr, hint));
    const std::string digits = descr.substr(2);
    const bool numeric = !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                                        [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    const std::size_t size = numeric && digits.size() < 3 ? std::stoul(digits) : 0;
    const bool integer_size = size == 1 || size == 2 || size == 4 || size == 8;
    const bool supported = (kind == 'b' && size == 1) || ((kind == 'i' || kind == 'u') && integer_size) ||
                           (kind == 'f' && (size == 4 || size == 8));
    if (!supported) {
      return fault(where_, fmt::format("unsupported dtype '{}'{}; expected bool, integers or float32/float64",
                                       descr, hint));
    }
    array.dtype = descr;
    array.kind = kind;
    array.item_bytes = size;
    array.big_endian = descr[0] == '>';
    return success();
  }

  const std::string& text_;
  const std::string& where_;
  std::size_t at_ = 0;
};

std::uint32_t little_endian(const std::string& bytes, std::size_t at, std::size_t count) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < count; ++i)
    value |= std::uint32_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return value;
}

// Where the header text starts and how long it is, from the preamble; `bytes` must hold at least 12.
struct Preamble {
  std::size_t header_start = 0;
  std::size_t header_bytes = 0;
};

Result<Preamble> read_preamble(const std::string& bytes, const std::string& where) {
  if (bytes.size() < kMagicBytes + 4 || bytes.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0)
    return fault(where, "not a .npy file (it does not start with \\x93NUMPY)");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) return fault(where, fmt::format(".npy format version {} is not supported (1 to 3 are)", major));
  Preamble preamble;
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  preamble.header_start = 8 + length_bytes;
  if (bytes.size() < preamble.header_start) return fault(where, "truncated within the .npy preamble");
  preamble.header_bytes = little_endian(bytes, 8, length_bytes);
  if (preamble.header_bytes > kMaxHeaderBytes)
    return fault(where, fmt::format(".npy header of {} bytes is beyond any numpy writes", preamble.header_bytes));
  if (bytes.size() < preamble.header_start + preamble.header_bytes)
    return fault(where, fmt::format("truncated: the .npy header declares {} bytes", preamble.header_bytes));
  return preamble;
}

Result<NpyArray> parse_header_text(const std::string& bytes, const Preamble& preamble, const std::string& where) {
  const std::string text = bytes.substr(preamble.header_start, preamble.header_bytes);
  return HeaderParser(text, where).parse();
}

// The element count and byte size the shape declares, refusing products that overflow.
Result<std::uint64_t> payload_bytes(const NpyArray& array, const std::string& where) {
  std::uint64_t count = 1;
  for (const auto size : array.shape) {
    if (size != 0 && count > kMaxNpyBytes / size)
      return fault(where, fmt::format("shape {} is beyond {} elements", fmt::join(array.shape, "x"), kMaxNpyBytes));
    count *= size;
  }
  if (count > kMaxNpyBytes / array.item_bytes)
    return fault(where, fmt::format("shape {} of {} is more than {}", fmt::join(array.shape, "x"), array.dtype,
                                    memory_size_text(static_cast<double>(kMaxNpyBytes))));
  return count * array.item_bytes;
}

template <class T>
T load(const char* at, bool swap) {
  char raw[sizeof(T)];
  std::memcpy(raw, at, sizeof(T));
  if (swap) std::reverse(raw, raw + sizeof(T));
  T value;
  std::memcpy(&value, raw, sizeof(T));
  return value;
}

bool host_is_big_endian() {
  const std::uint16_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  return first == 0;
}

}  // namespace

std::uint64_t NpyArray::element_count() const {
  std::uint64_t count = 1;
  for (const auto size : shape) count *= size;
  return count;
}

double NpyArray::value(std::size_t i) const {
  const char* at = bytes.data() + i * item_bytes;
  const bool swap = item_bytes > 1 && big_endian != host_is_big_endian();
  switch (kind) {
    case 'b': return *at != 0 ? 1.0 : 0.0;
    case 'f': return item_bytes == 4 ? static_cast<double>(load<float>(at, swap)) : load<double>(at, swap);
    case 'i':
      switch (item_bytes) {
        case 1: return load<std::int8_t>(at, false);
        case 2: return load<std::int16_t>(at, swap);
        case 4: return load<std::int32_t>(at, swap);
        default: return static_cast<double>(load<std::int64_t>(at, swap));
      }
    default:
      switch (item_bytes) {
        case 1: return load<std::uint8_t>(at, false);
        case 2: return load<std::uint16_t>(at, swap);
        case 4: return load<std::uint32_t>(at, swap);
        default: return static_cast<double>(load<std::uint64_t>(at, swap));
      }
  }
}

Result<NpyArray> parse_npy_header(const std::string& leading_bytes, const std::string& where) {
  auto preamble = read_preamble(leading_bytes, where);
  if (!preamble) return Error{preamble.error()};
  auto array = parse_header_text(leading_bytes, *preamble, where);
  if (!array) return array;
  if (auto size = payload_bytes(*array, where); !size) return Error{size.error()};
  return array;
}

Result<std::uint64_t> npy_file_bytes(const std::string& leading_bytes, const std::string& where) {
  auto preamble = read_preamble(leading_bytes, where);
  if (!preamble) return Error{preamble.error()};
  auto array = parse_header_text(leading_bytes, *preamble, where);
  if (!array) return Error{array.error()};
  auto payload = payload_bytes(*array, where);
  if (!payload) return Error{payload.error()};
  return preamble->header_start + preamble->header_bytes + *payload;
}

Result<NpyArray> parse_npy(std::string bytes, const std::string& where) {
  auto preamble = read_preamble(bytes, where);
  if (!preamble) return Error{preamble.error()};
  auto array = parse_header_text(bytes, *preamble, where);
  if (!array) return array;
  auto expected = payload_bytes(*array, where);
  if (!expected) return Error{expected.error()};
  const std::size_t data_start = preamble->header_start + preamble->header_bytes;
  const std::uint64_t present = bytes.size() - data_start;
  if (present != *expected)
    return fault(where, fmt::format("{}: the header declares {} {} elements ({} bytes) but {} bytes follow",
                                    present < *expected ? "truncated" : "trailing bytes",
                                    array->element_count(), array->dtype, *expected, present));
  bytes.erase(0, data_start);
  array->bytes = std::move(bytes);
  return array;
}

Result<NpyArray> read_npy_file(const std::string& path) {
  auto bytes = read_checked_file(path, ".npy file", kMaxNpyBytes);
  if (!bytes) return Error{bytes.error()};
  return parse_npy(std::move(*bytes), path);
}

Result<NpyArray> read_npy_header(const std::string& path) {
  auto file = open_checked_file(path, ".npy file", kMaxNpyBytes);
  if (!file) return Error{file.error()};
  std::string leading(std::min<std::uint64_t>(file->size(), kMaxHeaderBytes + 12), '\0');
  std::size_t filled = 0;
  while (filled < leading.size()) {
    const auto got = ::read(file->fd(), leading.data() + filled, leading.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fault(path, fmt::format("cannot read .npy file: {}", std::strerror(errno)));
    if (got == 0) break;
    filled += static_cast<std::size_t>(got);
  }
  leading.resize(filled);
  return parse_npy_header(leading, path);
}

std::string npy_bytes(const NpyArray& array) {
  std::string shape;
  for (const auto size : array.shape) shape += fmt::format("{}, ", size);
  if (array.shape.size() > 1) shape.resize(shape.size() - 2);  // (3,) keeps its comma, (3, 4) has none at the end
  else if (!shape.empty()) shape.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", array.dtype, shape);
  // numpy pads with spaces so that the data starts on a 64-byte boundary, ending the header with '\n'.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicBytes);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out += array.bytes;
  return out;
}

NpyArray npy_array(std::vector<std::uint64_t> shape, const std::vector<std::uint8_t>& values) {
  NpyArray array;
  array.shape = std::move(shape);
  array.dtype = "|u1";
  array.kind = 'u';
  array.item_bytes = 1;
  array.bytes.assign(values.begin(), values.end());
  return array;
}

NpyArray npy_array(std::vector<std::uint64_t> shape, const std::vector<float>& values) {
  NpyArray array;
  array.shape = std::move(shape);
  array.dtype = "<f4";
  array.kind = 'f';
  array.item_bytes = 4;
  array.bytes.resize(values.size() * sizeof(float));
  std::memcpy(array.bytes.data(), values.data(), array.bytes.size());  // x86-64 is little-endian, as "<f4" says
  return array;
}

}  // namespace psgrad
