// The id hash Thinc's HashEmbed uses and the token hash of spaCy's StringStore, against their own outputs.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/murmurhash3.hpp"
#include "model/string_hash.hpp"

using namespace psgrad;

namespace {

const std::vector<std::uint64_t> ids = {0, 1, 42, (1ull << 63) + 5, ~0ull, 10639093010105930009ull};

}  // namespace

TEST_CASE("hash_id gives the rows of Thinc's ops.hash for every id and seed") {
  // Printed by thinc 8.1.7's NumpyOps().hash(numpy.array(ids, dtype="uint64"), seed).tolist().
  struct Expected {
    std::uint32_t seed;
    std::vector<IdHash> rows;
  };
  const std::vector<Expected> expected = {
      {0,
       {{3428303819u, 685728695u, 3303603794u, 4065689084u},
        {4211459146u, 4457399u, 3547175942u, 1032506804u},
        {2312273400u, 3064775577u, 2532454272u, 616110075u},
        {813787510u, 2903724642u, 777267080u, 406021370u},
        {448458099u, 2699342458u, 1800029871u, 1763775177u},
        {2926268781u, 476179178u, 3680607274u, 4224345900u}}},
      // Seed 8 xor the key length 8 leaves nothing to mix for id 0: Thinc's hash is four zeros too.
      {8,
       {{0u, 0u, 0u, 0u},
        {1161550108u, 2247783286u, 1742325162u, 1224191281u},
        {4184185056u, 2436947566u, 1981310288u, 3655421350u},
        {742987760u, 4031305880u, 1114481640u, 3899475172u},
        {2488739950u, 2974852181u, 1585626277u, 2314794624u},
        {3990185950u, 2570392174u, 1690311629u, 3855588262u}}},
      {12345,
       {{2360303700u, 3493239080u, 1037496739u, 3543588722u},
        {2243369068u, 2222881641u, 1200790577u, 2330502550u},
        {2194393202u, 4151945105u, 1101743318u, 1583367490u},
        {374407105u, 3169790450u, 3784996340u, 839515888u},
        {1967414132u, 343595426u, 191999711u, 3899055424u},
        {2582683962u, 416360688u, 1379045388u, 3797100681u}}},
  };
  for (const auto& seed : expected) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      CAPTURE(seed.seed);
      CAPTURE(ids[i]);
      CHECK(hash_id(ids[i], seed.seed) == seed.rows[i]);
    }
  }
}

TEST_CASE("string_hash is spaCy's StringStore hash of the UTF-8 bytes") {
  // spaCy's documentation gives StringStore()["spacy"] == 10639093010105930009; the others are the
  // murmurhash package's MurmurHash64A(bytes, len, 1), covering no bytes, a tail only, several
  // 8-byte blocks with a tail, and multi-byte UTF-8.
  CHECK(string_hash("spacy") == 10639093010105930009ull);
  CHECK(string_hash("") == 14313749767032693980ull);
  CHECK(string_hash("cat") == 5439657043933447811ull);
  CHECK(string_hash("na\xc3\xafve") == 16224804062388677344ull);
  CHECK(string_hash("hello world, a longer token") == 13459711103087076335ull);
}

TEST_CASE("murmurhash64a depends on every byte and on the seed") {
  const std::string text = "abcdefghijk";  // one block and a three-byte tail
  const std::uint64_t base = murmurhash64a(text.data(), text.size(), 1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string changed = text;
    changed[i] ^= 1;
    CAPTURE(i);
    CHECK(murmurhash64a(changed.data(), changed.size(), 1) != base);
  }
  CHECK(murmurhash64a(text.data(), text.size(), 2) != base);
}
