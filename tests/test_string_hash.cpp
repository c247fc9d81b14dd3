// Tests for the 64-bit string hash: the values Python's murmurhash package gives (its hash64, which
// spaCy's StringStore calls with seed 1), computed there once and written down here.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "model/string_hash.hpp"

using namespace psgrad;

namespace {

struct Known {
  const char* text;
  std::uint64_t seed_one;   // murmurhash.mrmr hash64(utf8, len, 1)
  std::uint64_t seed_zero;  // the same with seed 0
};

// Every tail length 0 to 7 and whole 8-byte words, plus a multi-byte UTF-8 string.
const Known known[] = {
    {"", 14313749767032693980ull, 0ull},
    {"a", 11901859001352538922ull, 510903276987443985ull},
    {"apple", 8566208034543834098ull, 12913750946862653418ull},
    {"hello world", 2758594965276909933ull, 15256545620076441550ull},
    {"python3-numpy", 2156204393750305900ull, 877745321171478986ull},
    {"libc6", 1658843973631023900ull, 15814411763251552146ull},
    {"Z\xc3\xbcrich", 9452955988637137518ull, 11624992374152108018ull},
    {"12345678", 9871996032675327904ull, 8471103573108904450ull},
    {"abcdefghi", 13885881106499164936ull, 14535887056033573570ull},
    {"1234567", 11906548768923648808ull, 12582702356558746626ull},
};

}  // namespace

TEST_CASE("string_hash gives the values of Python's murmurhash hash64 with seed 1, as spaCy's StringStore") {
  for (const auto& entry : known) {
    CAPTURE(entry.text);
    CHECK(string_hash(entry.text) == entry.seed_one);
    CHECK(murmurhash64a(entry.text, std::string(entry.text).size(), 0) == entry.seed_zero);
  }
}

TEST_CASE("murmurhash64a reads the key byte by byte, so an unaligned copy hashes the same") {
  const std::string text = "xhello world";
  CHECK(murmurhash64a(text.data() + 1, text.size() - 1, 1) == 2758594965276909933ull);
}
