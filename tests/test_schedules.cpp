// Thinc 8.3's learning-rate schedules (thinc/schedules.py) against values worked out by hand from its
// formulas, and an optimizer stepping with them.
#include <doctest/doctest.h>

#include <cmath>
#include <ostream>  // doctest prints a failed check's shared_ptr with operator<<
#include <vector>

#include "io/config.hpp"
#include "model/adam.hpp"
#include "model/schedule.hpp"
#include "model/sgd.hpp"

using namespace psgrad;

namespace {

std::unique_ptr<Schedule> make(const std::string& name, const Settings& settings) {
  auto schedule = build_schedule(name, settings);
  INFO("error: " << (schedule ? std::string() : schedule.error()));
  REQUIRE(schedule.ok());
  return std::move(schedule).value();
}

}  // namespace

TEST_CASE("Thinc's schedule names are registered: constant, decaying, compounding, slanted, warmup, cyclic") {
  for (const char* name : {"constant.v1", "decaying.v1", "compounding.v1", "slanted_triangular.v1",
                           "warmup_linear.v1", "cyclic_triangular.v1"}) {
    INFO(name);
    CHECK(find_schedule(name) != nullptr);
  }
  CHECK(find_schedule("linear.v1") == nullptr);
}

TEST_CASE("constant.v1 gives rate at every step") {
  auto s = make("constant.v1", {{"rate", 0.005}});
  CHECK(s->at(0) == 0.005);
  CHECK(s->at(123456) == 0.005);
}

TEST_CASE("decaying.v1 is base_rate / (1 + decay * t) with t counting from its start value") {
  auto s = make("decaying.v1", {{"base_rate", 0.001}, {"decay", 1e-4}});
  CHECK(s->at(0) == doctest::Approx(0.001).epsilon(1e-15));
  CHECK(s->at(1) == doctest::Approx(0.001 / 1.0001).epsilon(1e-15));
  CHECK(s->at(10) == doctest::Approx(0.001 / 1.001).epsilon(1e-15));
  auto later = make("decaying.v1", {{"base_rate", 0.001}, {"decay", 1e-4}, {"t", std::int64_t{5}}});
  CHECK(later->at(0) == doctest::Approx(0.001 / 1.0005).epsilon(1e-15));
}

TEST_CASE("warmup_linear.v1 rises from 0 over warmup_steps then falls to 0 at total_steps and stays there") {
  auto s = make("warmup_linear.v1",
                {{"initial_rate", 0.01}, {"warmup_steps", std::int64_t{4}}, {"total_steps", std::int64_t{10}}});
  // step / 4 * 0.01 while rising; (10 - step) / 6 * 0.01 after.
  const std::vector<double> expected = {0.0, 0.0025, 0.005, 0.0075, 0.01, 0.01 * 5 / 6, 0.01 * 4 / 6,
                                        0.005, 0.01 * 2 / 6, 0.01 / 6, 0.0, 0.0, 0.0};
  for (std::size_t step = 0; step < expected.size(); ++step) {
    INFO("step " << step);
    CHECK(s->at(step) == doctest::Approx(expected[step]).epsilon(1e-15));
  }
}

TEST_CASE("cyclic_triangular.v1 is a triangle wave between min_lr and max_lr, starting one step in") {
  auto s = make("cyclic_triangular.v1", {{"min_lr", 0.001}, {"max_lr", 0.01}, {"period", std::int64_t{4}}});
  // Thinc's counter it = step + 1; relative = max(0, 1 - |it/4 - 2*floor(1 + it/8) + 1|).
  CHECK(s->at(0) == doctest::Approx(0.00325));  // it 1: relative 0.25
  CHECK(s->at(1) == doctest::Approx(0.0055));   // it 2: 0.5
  CHECK(s->at(3) == doctest::Approx(0.01));     // it 4: the peak
  CHECK(s->at(5) == doctest::Approx(0.0055));   // it 6: half way down
  CHECK(s->at(7) == doctest::Approx(0.001));    // it 8: the trough
  CHECK(s->at(8) == doctest::Approx(0.00325));  // it 9: rising again
}

TEST_CASE("slanted_triangular.v1 rises for int(num_steps * cut_frac) steps, then falls past max_rate / ratio") {
  auto s = make("slanted_triangular.v1", {{"max_rate", 0.01}, {"num_steps", std::int64_t{100}}});
  // cut 10; t = step + 1; rate = 0.01 * (1 + p * 31) / 32.
  CHECK(s->at(0) == doctest::Approx(0.01 * 4.1 / 32));    // p = 0.1
  CHECK(s->at(9) == doctest::Approx(0.01));               // t = cut: p = 1
  CHECK(s->at(54) == doctest::Approx(0.01 * 16.5 / 32));  // p = 1 - 45/90
  CHECK(s->at(99) == doctest::Approx(0.01 / 32));         // p = 0
  CHECK(s->at(108) == doctest::Approx(0.01 * (1 - 3.1) / 32));  // p = -0.1: below zero, as in Thinc
}

TEST_CASE("slanted_triangular.v1 refuses a cut of zero steps, where Thinc divides by zero") {
  auto s = build_schedule("slanted_triangular.v1", {{"max_rate", 0.01}, {"num_steps", std::int64_t{5}}});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("int(num_steps * cut_frac)") != std::string::npos);
}

TEST_CASE("compounding.v1 multiplies by compound each step and clips at stop from either side") {
  auto up = make("compounding.v1", {{"start", 1.0}, {"stop", 10.0}, {"compound", 1.5}});
  CHECK(up->at(0) == 1.0);
  CHECK(up->at(1) == 1.5);
  CHECK(up->at(2) == 2.25);
  CHECK(up->at(5) == 1.5 * 1.5 * 1.5 * 1.5 * 1.5);
  CHECK(up->at(6) == 10.0);
  CHECK(up->at(2) == 2.25);  // an earlier step again: the running product starts over
  auto down = make("compounding.v1", {{"start", 10.0}, {"stop", 1.0}, {"compound", 0.5}});
  CHECK(down->at(1) == 5.0);
  CHECK(down->at(3) == 1.25);
  CHECK(down->at(4) == 1.0);
}

TEST_CASE("a schedule's missing or out-of-range setting is an error naming it") {
  auto missing = build_schedule("warmup_linear.v1", {{"initial_rate", 0.01}, {"warmup_steps", std::int64_t{4}}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("total_steps") != std::string::npos);
  auto zero_period =
      build_schedule("cyclic_triangular.v1", {{"min_lr", 0.001}, {"max_lr", 0.01}, {"period", std::int64_t{0}}});
  REQUIRE_FALSE(zero_period.ok());
  CHECK(zero_period.error().find("period") != std::string::npos);
}

TEST_CASE("sgd with a schedule steps by the scheduled rate of its own step count") {
  ParameterLayout layout;
  layout.add("a", "W", 1, 2);
  Sgd sgd(SgdSettings{}, layout);  // its fixed rate 0.1 must not be used
  sgd.set_learn_rate_schedule(
      make("warmup_linear.v1", {{"initial_rate", 0.5}, {"warmup_steps", std::int64_t{2}}, {"total_steps", std::int64_t{4}}}));
  std::vector<float> w = {1.0f, -1.0f};
  const std::vector<float> g = {0.3f, 0.4f};  // norm 0.5: not clipped
  // Rates 0, 0.25, 0.5, 0.25, 0: the weights move by rate x g.
  double expected0 = 1.0, expected1 = -1.0;
  for (double rate : {0.0, 0.25, 0.5, 0.25, 0.0}) {
    sgd.apply_gradients(w.data(), g.data());
    expected0 -= rate * 0.3;
    expected1 -= rate * 0.4;
    CHECK(w[0] == doctest::Approx(expected0).epsilon(1e-6));
    CHECK(w[1] == doctest::Approx(expected1).epsilon(1e-6));
  }
}

TEST_CASE("adam with a schedule uses the scheduled rate in the bias-corrected step and the weight decay") {
  ParameterLayout layout;
  layout.add("a", "W", 1, 1);
  AdamSettings settings;
  settings.L2 = 0.1;
  Adam adam(settings, layout);
  adam.set_learn_rate_schedule(make("decaying.v1", {{"base_rate", 0.01}, {"decay", 0.5}}));
  std::vector<float> w = {0.5f};
  double expected = 0.5, m = 0.0, v = 0.0;
  const double g = 0.2;
  for (int t = 1; t <= 4; ++t) {
    adam.apply_gradients(w.data(), std::vector<float>{0.2f}.data());
    const double lr = 0.01 / (1.0 + 0.5 * (t - 1));
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g * g;
    expected -= lr * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t)) * m / (std::sqrt(v) + 1e-8);
    expected -= lr * 0.1 * expected;
    INFO("step " << t);
    CHECK(w[0] == doctest::Approx(expected).epsilon(1e-5));
  }
}

TEST_CASE("a restored optimizer continues its schedule at the restored step") {
  ParameterLayout layout;
  layout.add("a", "W", 1, 2);
  auto schedule = [] { return make("cyclic_triangular.v1", {{"min_lr", 0.0}, {"max_lr", 0.1}, {"period", std::int64_t{2}}}); };
  const std::vector<float> g = {0.1f, -0.2f};
  Sgd straight(SgdSettings{}, layout), first(SgdSettings{}, layout), resumed(SgdSettings{}, layout);
  straight.set_learn_rate_schedule(schedule());
  first.set_learn_rate_schedule(schedule());
  resumed.set_learn_rate_schedule(schedule());
  std::vector<float> a = {0.0f, 0.0f}, b = a;
  for (int i = 0; i < 5; ++i) straight.apply_gradients(a.data(), g.data());
  for (int i = 0; i < 2; ++i) first.apply_gradients(b.data(), g.data());
  REQUIRE(resumed.set_state(first.state()));
  for (int i = 0; i < 3; ++i) resumed.apply_gradients(b.data(), g.data());
  CHECK(a == b);
  // The rates were not all equal, so a schedule restarted from step 0 would have ended elsewhere.
  Sgd head(SgdSettings{}, layout), restarted(SgdSettings{}, layout);
  head.set_learn_rate_schedule(schedule());
  restarted.set_learn_rate_schedule(schedule());
  std::vector<float> c = {0.0f, 0.0f};
  for (int i = 0; i < 2; ++i) head.apply_gradients(c.data(), g.data());
  for (int i = 0; i < 3; ++i) restarted.apply_gradients(c.data(), g.data());
  CHECK(c != a);
}

TEST_CASE("a schedule whose rate is 0 only at some steps can drive a run, one that is 0 at every step cannot") {
  // The README's warm-up: 0 at step 0, then rising; Thinc allows it.
  auto warmup = make("warmup_linear.v1", {{"initial_rate", 0.002},
                                          {"warmup_steps", std::int64_t{20}},
                                          {"total_steps", std::int64_t{200}}});
  CHECK(warmup->at(0) == 0.0);
  CHECK_FALSE(schedule_problem(*warmup, 200).has_value());
  auto zero = make("constant.v1", {{"rate", 0.0}});
  const auto problem = schedule_problem(*zero, 200);
  REQUIRE(problem.has_value());
  CHECK(problem->find("0 at every one of the run's 200 steps") != std::string::npos);
  // warm-up and total of 0 steps: 0 from the start.
  auto empty = make("warmup_linear.v1", {{"initial_rate", 0.002},
                                         {"warmup_steps", std::int64_t{0}},
                                         {"total_steps", std::int64_t{0}}});
  CHECK(schedule_problem(*empty, 50).has_value());
}

TEST_CASE("an optimizer whose schedule starts at rate 0 is built and leaves the weights as they are at that step") {
  ParameterLayout layout;
  layout.add("a", "W", 2, 2);
  Adam adam(AdamSettings{}, layout);
  adam.set_learn_rate_schedule(make("warmup_linear.v1", {{"initial_rate", 0.01},
                                                         {"warmup_steps", std::int64_t{2}},
                                                         {"total_steps", std::int64_t{10}}}));
  std::vector<float> weights = {1, 2, 3, 4};
  const std::vector<float> gradient = {0.5f, -0.5f, 0.25f, 1};
  adam.apply_gradients(weights.data(), gradient.data());
  CHECK(adam.last_step_finite());
  CHECK(weights == std::vector<float>{1, 2, 3, 4});
  adam.apply_gradients(weights.data(), gradient.data());
  CHECK(weights != std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("a list learn_rate takes one value a step and keeps the last, and reads back after rendering") {
  auto config = parse_config("[optimizer]\n@optimizers = \"Adam.v1\"\nlearn_rate = [0.01, 0.03, 0.002]\n", "list.cfg");
  REQUIRE_MESSAGE(config.ok(), config.error());
  CHECK(config->optimizer.learn_rates == std::vector<double>{0.01, 0.03, 0.002});
  CHECK(get_number(config->optimizer.settings, "learn_rate") == 0.01);  // the first value, as Thinc's optimizer
  auto schedule = learn_rate_schedule(config->optimizer).value();
  CHECK(schedule->at(0) == 0.01);
  CHECK(schedule->at(1) == 0.03);
  CHECK(schedule->at(2) == 0.002);
  CHECK(schedule->at(500) == 0.002);
  for (const auto format : {ConfigFormat::thinc, ConfigFormat::toml}) {
    auto again = parse_config(render_config(*config, format), format == ConfigFormat::thinc ? "again.cfg" : "again.toml");
    REQUIRE_MESSAGE(again.ok(), again.error());
    CHECK(again->optimizer.learn_rates == config->optimizer.learn_rates);
  }
  auto empty = parse_config("[optimizer]\n@optimizers = \"Adam.v1\"\nlearn_rate = []\n", "empty.cfg");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().find("optimizer.learn_rate: an empty list has no first rate") != std::string::npos);
}

TEST_CASE("constant_then.v1 keeps its rate for its steps, then runs its schedule from that schedule's start") {
  const std::string text =
      "[optimizer]\n@optimizers = \"Adam.v1\"\n[optimizer.learn_rate]\n@schedules = \"constant_then.v1\"\nrate = 0.5\n"
      "steps = 2\n[optimizer.learn_rate.schedule]\n@schedules = \"decaying.v1\"\nbase_rate = 0.1\ndecay = 1.0\n";
  auto config = parse_config(text, "then.cfg");
  REQUIRE_MESSAGE(config.ok(), config.error());
  CHECK(config->optimizer.then_schedule == "decaying.v1");
  auto schedule = learn_rate_schedule(config->optimizer).value();
  CHECK(schedule->at(0) == 0.5);
  CHECK(schedule->at(1) == 0.5);
  CHECK(schedule->at(2) == doctest::Approx(0.1));        // decaying's t = 0
  CHECK(schedule->at(3) == doctest::Approx(0.1 / 2.0));  // t = 1
  for (const auto format : {ConfigFormat::thinc, ConfigFormat::toml}) {
    auto again = parse_config(render_config(*config, format), format == ConfigFormat::thinc ? "again.cfg" : "again.toml");
    REQUIRE_MESSAGE(again.ok(), again.error());
    CHECK(again->optimizer.then_schedule == "decaying.v1");
    CHECK(again->optimizer.then_settings == config->optimizer.then_settings);
  }
  auto alone = parse_config("[optimizer]\n@optimizers = \"Adam.v1\"\n[optimizer.learn_rate]\n@schedules = "
                            "\"constant_then.v1\"\nrate = 0.5\nsteps = 2\n",
                            "alone.cfg");
  REQUIRE_FALSE(alone.ok());
  CHECK(alone.error().find("constant_then.v1 needs its following schedule") != std::string::npos);
}
