// How often a waiting worker watches for half a server step: every push while it finds halves, ever
// more rarely while it does not.
#include <doctest/doctest.h>

#include <vector>

#include "runtime/help_backoff.hpp"

using namespace psgrad;

namespace {

// Runs `pushes` pushes, each watch finding a half or not as `finds` says; returns the pushes watched.
template <typename Finds>
std::vector<int> watched_pushes(HelpBackoff& backoff, int first, int pushes, Finds finds) {
  std::vector<int> watched;
  for (int push = first; push < first + pushes; ++push) {
    if (!backoff.watch_now()) continue;
    watched.push_back(push);
    backoff.record(finds(push));
  }
  return watched;
}

}  // namespace

TEST_CASE("a worker watches after every push while its watches find halves") {
  HelpBackoff backoff;
  const auto watched = watched_pushes(backoff, 0, 100, [](int) { return true; });
  CHECK(watched.size() == 100);
}

TEST_CASE("a worker whose watches find nothing watches after pushes ever further apart, at most 64 apart") {
  HelpBackoff backoff;
  const auto watched = watched_pushes(backoff, 0, 400, [](int) { return false; });
  // Misses in a row skip 1, 3, 7, 15, 31, then 63 pushes each time.
  const std::vector<int> expected{0, 2, 6, 14, 30, 62, 126, 190, 254, 318, 382};
  CHECK(watched == expected);
}

TEST_CASE("one watch that finds a half brings back a watch after every push") {
  HelpBackoff backoff;
  watched_pushes(backoff, 0, 200, [](int) { return false; });
  // Pushes 200-253 are skipped up to the next watch, which finds a half.
  const auto watched = watched_pushes(backoff, 200, 100, [](int) { return true; });
  REQUIRE(!watched.empty());
  CHECK(watched.front() < 200 + 64);
  CHECK(watched.size() == static_cast<std::size_t>(300 - watched.front()));
}
