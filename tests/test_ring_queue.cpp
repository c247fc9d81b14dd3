// The scheduler's job queue: first in, first out, also when it wraps around and when it grows.
#include <doctest/doctest.h>

#include <deque>

#include "runtime/ring_queue.hpp"

using namespace psgrad;

TEST_CASE("a ring queue hands values out in the order they came, across wrap-around and growth") {
  RingQueue<int> queue(4);
  std::deque<int> expected;
  int next = 0;
  // Rounds that push more than they pop, then drain: the head wraps around before each growth.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 3 + round % 5; ++i) {
      queue.push_back(next);
      expected.push_back(next++);
    }
    for (int i = 0; i < 2 + round % 3 && !expected.empty(); ++i) {
      REQUIRE(!queue.empty());
      CHECK(queue.pop_front() == expected.front());
      expected.pop_front();
    }
    CHECK(queue.size() == expected.size());
  }
  while (!expected.empty()) {
    CHECK(queue.pop_front() == expected.front());
    expected.pop_front();
  }
  CHECK(queue.empty());
}
