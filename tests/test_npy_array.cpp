// Tests for the .npy reader and writer: numpy's own files, round trips, and one clear error per fault.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "io/npy_array.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

std::string fixture(const std::string& name) { return std::string(PSGRAD_SOURCE_DIR) + "/tests/data/" + name; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool is_one_line(const std::string& text) { return text.find('\n') == std::string::npos; }

// A .npy file with the given header dict and payload, as numpy lays it out (format 1.0).
std::string npy_with_header(const std::string& dict, const std::string& payload) {
  std::string header = dict + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + payload;
}

}  // namespace

TEST_CASE("a big-endian int16 array saved by numpy reads back with its shape and signed values") {
  auto array = read_npy_file(fixture("numpy-big-endian-int16.npy"));
  REQUIRE_MESSAGE(array.ok(), (array.ok() ? "" : array.error()));
  CHECK(array->shape == std::vector<std::uint64_t>{2, 3});
  CHECK(array->dtype == ">i2");
  const std::vector<double> expected{1, -2, 300, 4, 5, -600};
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(array->value(i) == expected[i]);
}

TEST_CASE("a float64 vector saved by numpy reads back exactly") {
  auto array = read_npy_file(fixture("numpy-float64.npy"));
  REQUIRE_MESSAGE(array.ok(), (array.ok() ? "" : array.error()));
  CHECK(array->shape == std::vector<std::uint64_t>{3});
  CHECK(array->value(0) == 0.5);
  CHECK(array->value(1) == -1.25);
  CHECK(array->value(2) == 3e10);
}

TEST_CASE("npy_bytes writes what parse_npy reads, with the data on a 64-byte boundary as numpy does") {
  const std::vector<float> values{0.25f, -1.0f, 3.5f, 1e-7f, 2.0f, 0.0f};
  const auto bytes = npy_bytes(npy_array({3, 2}, values));
  const std::size_t header_bytes = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  CHECK((10 + header_bytes) % 64 == 0);
  auto back = parse_npy(bytes, "round-trip.npy");
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
  CHECK(back->shape == std::vector<std::uint64_t>{3, 2});
  CHECK(back->dtype == "<f4");
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(back->value(i) == static_cast<double>(values[i]));

  auto bytes_back = parse_npy(npy_bytes(npy_array({4}, std::vector<std::uint8_t>{0, 7, 200, 255})), "u1.npy");
  REQUIRE(bytes_back.ok());
  CHECK(bytes_back->shape == std::vector<std::uint64_t>{4});
  CHECK(bytes_back->value(2) == 200.0);
}

TEST_CASE("parse_npy_header reads the shape and dtype without the elements") {
  const auto bytes = npy_bytes(npy_array({5, 28, 28}, std::vector<std::uint8_t>(5 * 28 * 28, 1)));
  auto header = parse_npy_header(bytes.substr(0, 128), "x.npy");
  REQUIRE_MESSAGE(header.ok(), (header.ok() ? "" : header.error()));
  CHECK(header->shape == std::vector<std::uint64_t>{5, 28, 28});
  CHECK(header->bytes.empty());
}

TEST_CASE("parse_npy refuses each kind of broken or unsupported array in one line naming the file") {
  const std::string good_dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }";
  struct Case {
    std::string what;
    std::string bytes;
    const char* fault;
  };
  const std::vector<Case> cases{
      {"not npy", "x,y\n1,2\n", "not a .npy file"},
      {"truncated data", npy_with_header(good_dict, "abc"), "truncated: the header declares 4 |u1 elements (4 bytes) but 3"},
      {"trailing data", npy_with_header(good_dict, "abcde"), "trailing bytes"},
      {"objects", npy_with_header("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", ""),
       "unsupported dtype '|O' (Python objects, pickled)"},
      {"text", npy_with_header("{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }", ""), "(text)"},
      {"Fortran order", npy_with_header("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 2), }", "abcd"),
       "Fortran-ordered arrays are not supported"},
      {"structured", npy_with_header("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", "abcd"),
       "structured arrays"},
      {"no shape", npy_with_header("{'descr': '|u1', 'fortran_order': False, }", ""), "lacks one of"},
      {"garbage header", npy_with_header("not a dict at all", ""), "bad .npy header"},
      {"huge shape", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", ""),
       "shape 1000000x1000000 is beyond"},
      {"future version", std::string("\x93NUMPY\x09\x00\x00\x00", 10), "format version 9 is not supported"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    auto parsed = parse_npy(c.bytes, "bad.npy");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().rfind("bad.npy: ", 0) == 0);
    CHECK_MESSAGE(contains(parsed.error(), c.fault), parsed.error());
    CHECK(is_one_line(parsed.error()));
  }
}

TEST_CASE("read_npy_file refuses a character device before reading it") {
  auto array = read_npy_file("/dev/zero");
  REQUIRE_FALSE(array.ok());
  CHECK(contains(array.error(), "/dev/zero: is a character device, not a .npy file"));
}
