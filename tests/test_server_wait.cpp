// ServerWait: when a worker process asks its server, when the server counts as silent, and when the
// worker gives up on it.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>

#include "runtime/server_wait.hpp"

using namespace psgrad;
using std::chrono::milliseconds;

namespace {

constexpr std::int64_t ms(std::int64_t count) { return count * 1'000'000; }

}  // namespace

TEST_CASE("a worker asks its server at once, then one question at a time, an interval apart") {
  ServerWait wait(milliseconds(60000), ms(5000));
  CHECK(wait.interval() == milliseconds(1000));  // a quarter of the limit, at most a second
  CHECK(wait.ask_now(ms(5000)));
  wait.asked(ms(5000));
  CHECK_FALSE(wait.ask_now(ms(9000)));  // still out
  wait.answered(ms(5001));
  CHECK_FALSE(wait.ask_now(ms(5999)));
  CHECK(wait.ask_now(ms(6000)));
}

TEST_CASE("the server is silent only while a question has waited longer than the interval") {
  ServerWait wait(milliseconds(400), 0);
  CHECK(wait.interval() == milliseconds(100));
  wait.asked(0);
  CHECK_FALSE(wait.silent(ms(100)));
  CHECK(wait.silent(ms(101)));
  wait.answered(ms(150));
  CHECK_FALSE(wait.silent(ms(10000)));  // nothing out: not silent, however long ago it last spoke
}

TEST_CASE("a worker gives up once its server has answered nothing for longer than the limit") {
  ServerWait wait(milliseconds(400), 0);
  wait.asked(0);
  CHECK_FALSE(wait.given_up(ms(400)));
  CHECK(wait.given_up(ms(401)));
  wait.answered(ms(401));  // an answer, even late, starts the wait again
  CHECK_FALSE(wait.given_up(ms(801)));
  CHECK(wait.given_up(ms(802)));
}

TEST_CASE("a limit of 0 waits for a silent server forever, still telling when it is silent") {
  ServerWait wait(milliseconds(0), 0);
  CHECK(wait.interval() == milliseconds(1000));
  wait.asked(0);
  CHECK(wait.silent(ms(1001)));
  CHECK_FALSE(wait.given_up(ms(30LL * 24 * 3600 * 1000)));
}

TEST_CASE("the interval between questions stays within 50 ms and 1 s") {
  CHECK(ServerWait(milliseconds(1), 0).interval() == milliseconds(50));
  CHECK(ServerWait(milliseconds(3'600'000), 0).interval() == milliseconds(1000));
}
