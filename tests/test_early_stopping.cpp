// Early stopping: which evaluation is the best and when patience runs out.
#include <doctest/doctest.h>

#include "model/early_stopping.hpp"

using namespace psgrad;

TEST_CASE("early stopping stops after patience evaluations in a row without a better accuracy") {
  EarlyStopping stopping(2);
  CHECK(stopping.record(0, 0.10));
  CHECK(stopping.record(10, 0.50));
  CHECK_FALSE(stopping.record(20, 0.45));
  CHECK_FALSE(stopping.should_stop());
  CHECK(stopping.record(30, 0.55));  // an improvement resets the count
  CHECK_FALSE(stopping.record(40, 0.55));  // a tie is no improvement
  CHECK_FALSE(stopping.should_stop());
  CHECK_FALSE(stopping.record(50, 0.54));
  CHECK(stopping.should_stop());
  CHECK(stopping.best_step() == 30);
  CHECK(stopping.best_accuracy() == 0.55);
}

TEST_CASE("early stopping with patience 0 never stops but still knows the best step") {
  EarlyStopping stopping(0);
  stopping.record(0, 0.9);
  for (std::uint64_t step = 10; step < 100; step += 10) stopping.record(step, 0.1);
  CHECK_FALSE(stopping.should_stop());
  CHECK(stopping.best_step() == 0);
}

TEST_CASE("the final evaluation can be the best but does not use up patience") {
  EarlyStopping stopping(1);
  stopping.record(10, 0.5);
  CHECK_FALSE(stopping.record_final(20, 0.4));
  CHECK_FALSE(stopping.should_stop());
  CHECK(stopping.best_step() == 10);
  CHECK(stopping.record_final(20, 0.6));
  CHECK(stopping.best_step() == 20);
}
