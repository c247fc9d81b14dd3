// Thinc 8.3's registered schedules, each formula written in Thinc's order of operations so the
// doubles match what Python computes.
#include "model/schedule.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/named_registry.hpp"

namespace psgrad {

namespace {

SettingSpec rate(const std::string& name, const std::string& description) {
  return {name, SettingKind::number, std::nullopt, description, 0.0};
}

SettingSpec count(const std::string& name, const std::string& description, double minimum,
                  std::optional<SettingValue> default_value = std::nullopt) {
  return {name, SettingKind::integer, std::move(default_value), description, minimum, 1e15};
}

template <class F>
class FormulaSchedule final : public Schedule {
 public:
  explicit FormulaSchedule(F formula) : formula_(std::move(formula)) {}
  double at(std::uint64_t step) override { return formula_(step); }

 private:
  F formula_;
};

template <class F>
std::unique_ptr<Schedule> formula(F f) {
  return std::make_unique<FormulaSchedule<F>>(std::move(f));
}

// constant.v1: yield rate forever.
ScheduleEntry constant() {
  return {"constant.v1",
          "rate at every step.",
          {rate("rate", "The learning rate.")},
          [](const Settings& s) -> Result<std::unique_ptr<Schedule>> {
            const double value = get_number(s, "rate");
            return formula([value](std::uint64_t) { return value; });
          }};
}

// decaying.v1: base_rate * (1.0 / (1.0 + decay * t)), t counting up from its start value.
ScheduleEntry decaying() {
  return {"decaying.v1",
          "base_rate * 1 / (1 + decay * t), t = start t + step.",
          {rate("base_rate", "The rate at t = 0."), rate("decay", "How fast the rate falls."),
           count("t", "Where t starts.", 0, SettingValue{std::int64_t{0}})},
          [](const Settings& s) -> Result<std::unique_ptr<Schedule>> {
            const double base_rate = get_number(s, "base_rate"), decay = get_number(s, "decay");
            const auto t0 = get_integer(s, "t");
            return formula([=](std::uint64_t step) {
              const auto t = static_cast<double>(t0 + static_cast<std::int64_t>(step));
              return base_rate * (1.0 / (1.0 + decay * t));
            });
          }};
}

// compounding.v1: start, start * compound, start * compound^2, ... clipped at stop. Thinc multiplies
// a running value, so this does too (pow would differ in the last bits); steps come in order, so the
// running product is kept and only rewound for an earlier step.
class Compounding final : public Schedule {
 public:
  Compounding(double start, double stop, double compound) : start_(start), stop_(stop), compound_(compound) {}
  double at(std::uint64_t step) override {
    if (step < step_) step_ = 0, current_ = start_;
    for (; step_ < step; ++step_) current_ *= compound_;
    return start_ > stop_ ? std::max(current_, stop_) : std::min(current_, stop_);
  }

 private:
  double start_, stop_, compound_;
  std::uint64_t step_ = 0;
  double current_ = start_;
};

ScheduleEntry compounding() {
  return {"compounding.v1",
          "start * compound^step, clipped at stop (from either side).",
          {rate("start", "The first value."), rate("stop", "The value it never passes."),
           rate("compound", "Factor per step."),
           {"t", SettingKind::number, SettingValue{0.0}, "Accepted and unused, as in Thinc.", 0.0}},
          [](const Settings& s) -> Result<std::unique_ptr<Schedule>> {
            return std::unique_ptr<Schedule>(std::make_unique<Compounding>(
                get_number(s, "start"), get_number(s, "stop"), get_number(s, "compound")));
          }};
}

// slanted_triangular.v1 (Howard and Ruder): up for cut = int(num_steps * cut_frac) steps, then down.
ScheduleEntry slanted_triangular() {
  return {"slanted_triangular.v1",
          "Howard and Ruder's slanted triangle: rises to max_rate over int(num_steps * cut_frac) steps, then "
          "falls to max_rate / ratio at num_steps (and below, past it, as in Thinc).",
          {rate("max_rate", "The peak rate."), count("num_steps", "Length of the triangle in steps.", 1),
           {"cut_frac", SettingKind::number, SettingValue{0.1}, "Fraction of num_steps spent rising.", 0.0, 1.0,
            true, true},
           count("ratio", "Peak rate over lowest rate.", 1, SettingValue{std::int64_t{32}}),
           {"decay", SettingKind::number, SettingValue{1.0}, "Accepted and unused, as in Thinc.", 0.0},
           {"t", SettingKind::number, SettingValue{0.0}, "Where t starts (it is incremented before each value).",
            0.0}},
          [](const Settings& s) -> Result<std::unique_ptr<Schedule>> {
            const double max_rate = get_number(s, "max_rate"), cut_frac = get_number(s, "cut_frac");
            const auto num_steps = get_integer(s, "num_steps"), ratio = get_integer(s, "ratio");
            const double t0 = get_number(s, "t");
            // Python's int() truncates toward zero, as the cast does for these non-negative values.
            const auto cut = static_cast<std::int64_t>(static_cast<double>(num_steps) * cut_frac);
            if (cut < 1)
              return Error{fmt::format("int(num_steps * cut_frac) must be at least 1, got int({} * {}) = {}",
                                       num_steps, cut_frac, cut)};
            return formula([=](std::uint64_t step) {
              const double t = t0 + static_cast<double>(step) + 1.0;
              const auto c = static_cast<double>(cut);
              const double p = t < c ? t / c : 1 - ((t - c) / (c * (1 / cut_frac - 1)));
              const auto r = static_cast<double>(ratio);
              return max_rate * (1 + p * (r - 1)) * (1 / r);
            });
          }};
}

// warmup_linear.v1: linear from 0 to initial_rate over warmup_steps, then linear down to 0 at total_steps.
ScheduleEntry warmup_linear() {
  return {"warmup_linear.v1",
          "Rises linearly from 0 to initial_rate over warmup_steps, then falls linearly to 0 at total_steps.",
          {rate("initial_rate", "The peak rate, reached at warmup_steps."),
           count("warmup_steps", "Steps of the rise.", 0), count("total_steps", "Step at which the rate is 0.", 0)},
          [](const Settings& s) -> Result<std::unique_ptr<Schedule>> {
            const double initial_rate = get_number(s, "initial_rate");
            const auto warmup = static_cast<double>(get_integer(s, "warmup_steps"));
            const auto total = static_cast<double>(get_integer(s, "total_steps"));
            return formula([=](std::uint64_t n) {
              const auto step = static_cast<double>(n);
              const double factor = step < warmup ? step / std::max(1.0, warmup)
                                                  : std::max(0.0, (total - step) / std::max(1.0, total - warmup));
              return factor * initial_rate;
            });
          }};
}

// cyclic_triangular.v1: a triangle wave between min_lr and max_lr with half-period `period`.
ScheduleEntry cyclic_triangular() {
  return {"cyclic_triangular.v1",
          "Triangle wave between min_lr and max_lr, period steps up then period steps down; starts one step in.",
          {rate("min_lr", "The lowest rate."), rate("max_lr", "The highest rate."),
           count("period", "Steps from the lowest to the highest rate.", 1)},
          [](const Settings& s) -> Result<std::unique_ptr<Schedule>> {
            const double min_lr = get_number(s, "min_lr"), max_lr = get_number(s, "max_lr");
            const auto period = static_cast<double>(get_integer(s, "period"));
            return formula([=](std::uint64_t step) {
              const double it = static_cast<double>(step) + 1.0;  // Thinc's counter starts at 1
              const double cycle = std::floor(1 + it / (2 * period));
              const double x = std::abs(it / period - 2 * cycle + 1);
              const double relative = std::max(0.0, 1 - x);
              return min_lr + (max_lr - min_lr) * relative;
            });
          }};
}

// constant_then.v1: rate for steps steps, then the schedule nested under it (learn_rate_schedule builds it).
ScheduleEntry constant_then() {
  return {"constant_then.v1",
          "rate for the first steps steps, then the schedule in [optimizer.learn_rate.schedule] from its start.",
          {rate("rate", "The rate of the first steps."), count("steps", "How many steps keep rate.", 0)},
          [](const Settings&) -> Result<std::unique_ptr<Schedule>> {
            return Error{"constant_then.v1 needs its following schedule: [optimizer.learn_rate.schedule] with "
                         "\"@schedules\""};
          }};
}

// The schedule after constant_then's constant steps, shifted to start at its own step 0.
class ConstantThen final : public Schedule {
 public:
  ConstantThen(double rate, std::uint64_t steps, std::unique_ptr<Schedule> then)
      : rate_(rate), steps_(steps), then_(std::move(then)) {}
  double at(std::uint64_t step) override { return step < steps_ ? rate_ : then_->at(step - steps_); }

 private:
  double rate_;
  std::uint64_t steps_;
  std::unique_ptr<Schedule> then_;
};

NamedRegistry<ScheduleEntry>& schedules() {
  static NamedRegistry<ScheduleEntry> registry{constant(),     decaying(),          compounding(),   slanted_triangular(),
                                               warmup_linear(), cyclic_triangular(), constant_then()};
  return registry;
}

}  // namespace

void register_schedule(ScheduleEntry schedule) { schedules().add(std::move(schedule)); }
std::shared_ptr<const ScheduleEntry> find_schedule(const std::string& name) { return schedules().find(name); }
std::vector<std::string> schedule_names() { return schedules().names(); }

Result<std::unique_ptr<Schedule>> build_schedule(const std::string& name, Settings settings) {
  const auto entry = find_schedule(name);
  if (!entry) return Error{fmt::format("unknown schedule \"{}\"", name)};
  if (auto missing = fill_defaults(entry->settings, settings))
    return Error{fmt::format("{} needs {}", name, *missing)};
  for (const auto& spec : entry->settings)
    if (auto expected = check_setting(spec, settings.at(spec.name)))
      return Error{fmt::format("{}: {}: expected {}", name, spec.name, *expected)};
  return entry->build(settings);
}

Result<std::unique_ptr<Schedule>> learn_rate_schedule(const OptimizerSection& optimizer) {
  if (!optimizer.learn_rates.empty()) {
    const auto values = optimizer.learn_rates;
    return formula([values](std::uint64_t step) { return values[std::min<std::uint64_t>(step, values.size() - 1)]; });
  }
  if (optimizer.schedule.empty()) return std::unique_ptr<Schedule>();
  if (optimizer.schedule != "constant_then.v1") return build_schedule(optimizer.schedule, optimizer.schedule_settings);
  auto then = build_schedule(optimizer.then_schedule, optimizer.then_settings);
  if (!then) return Error{fmt::format("constant_then.v1's schedule: {}", then.error())};
  Settings settings = optimizer.schedule_settings;
  fill_defaults(find_schedule("constant_then.v1")->settings, settings);
  return std::unique_ptr<Schedule>(std::make_unique<ConstantThen>(
      get_number(settings, "rate"), static_cast<std::uint64_t>(get_integer(settings, "steps")), std::move(*then)));
}

std::optional<std::string> schedule_problem(Schedule& schedule, std::uint64_t steps) {
  const auto checked = std::min(steps, schedule_checked_steps);
  bool any_nonzero = false;
  for (std::uint64_t step = 0; step < checked; ++step) {
    const double rate = schedule.at(step);
    if (!std::isfinite(rate)) return fmt::format("its rate at step {} is {}", step, rate);
    any_nonzero = any_nonzero || rate != 0.0;
  }
  if (any_nonzero || checked == 0) return std::nullopt;
  return checked == steps ? fmt::format("its rate is 0 at every one of the run's {} steps, so nothing would train", steps)
                          : fmt::format("its rate is 0 at each of the run's first {} steps", checked);
}

}  // namespace psgrad
