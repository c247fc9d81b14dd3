// RowBlocks: rows made a block at a time hold their fill, keep their address as more are made, and
// keep what was written into them.
#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "model/row_blocks.hpp"

namespace psgrad {

TEST_CASE("rows keep their address and values while many more are made") {
  RowBlocks blocks(3, 0.25f);
  CHECK(blocks.size() == 0);
  blocks.grow_to(1);
  float* first = blocks.row(0);
  first[0] = 7.0f;
  std::vector<const float*> addresses;
  for (std::size_t rows = 2; rows <= 5000; rows += 3) {
    blocks.grow_to(rows);
    addresses.push_back(blocks.row(rows - 1));
  }
  CHECK(blocks.size() == 5000);
  CHECK(blocks.row(0) == first);
  CHECK(first[0] == 7.0f);
  CHECK(first[1] == 0.25f);
  std::size_t rows = 2;
  for (const float* address : addresses) {
    CHECK(blocks.row(rows - 1) == address);
    rows += 3;
  }
  // Every new row holds the fill, in every block.
  for (const std::size_t slot : {std::size_t{1}, std::size_t{1023}, std::size_t{1024}, std::size_t{4998}})
    for (std::size_t f = 0; f < 3; ++f) CHECK(blocks.row(slot)[f] == 0.25f);
  // Rows of one block are width apart; growing to fewer rows makes none.
  CHECK(blocks.row(11) - blocks.row(10) == 3);
  blocks.grow_to(10);
  CHECK(blocks.size() == 5000);
}

}  // namespace psgrad
