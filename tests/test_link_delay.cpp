// The cluster simulator's user-space link delay: its delay spelling and its release schedule.
#include <doctest/doctest.h>

#include "apps/link_delay/delay_line.hpp"

using namespace std::chrono_literals;
using psgrad::DelayLine;
using psgrad::LinkClock;

TEST_CASE("a link delay is read in tc's spelling") {
  CHECK(*psgrad::parse_link_delay("1ms") == 1ms);
  CHECK(*psgrad::parse_link_delay("500us") == 500us);
  CHECK(*psgrad::parse_link_delay("0.5ms") == 500us);
  CHECK(*psgrad::parse_link_delay("2s") == 2s);
  CHECK(*psgrad::parse_link_delay("0ms") == 0ns);
  for (const char* bad : {"", "ms", "1", "1 ms", "-1ms", "1min", "x1ms", "11s"}) {
    CAPTURE(bad);
    CHECK_FALSE(psgrad::parse_link_delay(bad).ok());
  }
  CHECK(psgrad::parse_link_delay("1min").error() == "delay '1min': expected a time like 1ms, 500us or 0.5ms");
}

TEST_CASE("a delay line releases each packet its delay after it arrived, oldest first") {
  DelayLine line(1ms);
  const auto start = LinkClock::time_point{} + 10s;
  CHECK_FALSE(line.next_due());
  line.arrived(7, start);
  line.arrived(8, start + 200us);
  line.arrived(9, start + 900us);
  CHECK(*line.next_due() == start + 1ms);
  CHECK_FALSE(line.take_due(start + 999us));
  CHECK(line.waiting() == 3);
  // At 1.2 ms packets 7 and 8 are due; one batch verdict for 8 releases both.
  CHECK(*line.take_due(start + 1200us) == 8u);
  CHECK(line.waiting() == 1);
  CHECK(*line.next_due() == start + 1900us);
  CHECK_FALSE(line.take_due(start + 1899us));
  CHECK(*line.take_due(start + 1900us) == 9u);
  CHECK_FALSE(line.next_due());
  CHECK_FALSE(line.take_due(start + 1h));
}
