// Tests for the early-stopping summary line: what it says must agree with itself when an async run goes
// on past the evaluation that used up the patience.
#include <doctest/doctest.h>

#include <string>

#include "apps/best_weights.hpp"

using namespace psgrad;

namespace {

void evaluate(SnapshotCallback& see, std::uint64_t step, double accuracy, bool final = false) {
  EvaluationReport report;
  report.iteration = step;
  report.version = step;
  report.accuracy = accuracy;
  report.final = final;
  Weights weights;
  weights.version = step;
  see(report, weights);
}

TrainingSummary stopped_at(std::uint64_t steps) {
  TrainingSummary summary;
  summary.steps = steps;
  summary.stopped_early = true;
  return summary;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("an async early stop whose final evaluation is the best names the evaluation the patience counted from") {
  auto best = std::make_shared<BestWeights>(3, false);
  auto see = best->callback();
  evaluate(see, 70, 0.912);
  evaluate(see, 80, 0.905);
  evaluate(see, 90, 0.910);
  evaluate(see, 100, 0.901);  // the third without improvement: stop
  REQUIRE(best->stop_flag()->load());
  evaluate(see, 126, 0.915, true);  // the steps applied until the stop reached the driver
  const auto line = best->summary_line(stopped_at(126));
  CHECK(contains(line, "stopped early after step 126: the 3 evaluations up to step 100 did not improve on step 70's "
                       "dev accuracy, 0.912"));
  CHECK(contains(line, "steps 101 to 126 were applied before the stop took effect"));
  CHECK(contains(line, "a later evaluation did better, 0.915 at step 126"));
  CHECK_FALSE(contains(line, "did not improve on the best"));
}

TEST_CASE("an early stop that keeps the best weights names both the unbeaten step and the kept one") {
  auto best = std::make_shared<BestWeights>(2, true);
  auto see = best->callback();
  evaluate(see, 10, 0.8);
  evaluate(see, 20, 0.7);
  evaluate(see, 30, 0.75);
  evaluate(see, 30, 0.75, true);
  const auto line = best->summary_line(stopped_at(30));
  CHECK(line == "stopped early after step 30: the 2 evaluations up to step 30 did not improve on step 10's dev "
                "accuracy, 0.800; kept the weights of step 10: the best dev accuracy, 0.800, of 4 evaluations");
}
