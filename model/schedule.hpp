// Learning-rate schedules as Thinc 8.3 registers them (thinc/schedules.py): the value for step n.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/job.hpp"
#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

// Thinc's schedules are generators the optimizer draws one value from per step (its first value at
// construction, the next after each update): the step with index n (0-based: the server's version
// before the step) uses the generator's n-th value. Here the value is computed from n directly, so a
// resumed run and every parameter-server shard pick up the schedule at the server's step.
class Schedule {
 public:
  virtual ~Schedule() = default;
  virtual double at(std::uint64_t step) = 0;  // not const: compounding caches its running product
};

struct ScheduleEntry {
  std::string name;  // "warmup_linear.v1"
  std::string description;
  std::vector<SettingSpec> settings;  // Thinc's parameter names
  // From validated settings; an error names the setting combination that cannot work.
  std::function<Result<std::unique_ptr<Schedule>>(const Settings&)> build;
};

// As for architectures: a later registration replaces a name; a found entry stays valid after it.
void register_schedule(ScheduleEntry schedule);
std::shared_ptr<const ScheduleEntry> find_schedule(const std::string& name);
std::vector<std::string> schedule_names();

// Fills the entry's defaults and builds; the error says what is wrong with the settings.
Result<std::unique_ptr<Schedule>> build_schedule(const std::string& name, Settings settings);

// The schedule of an [optimizer]'s learn_rate: a list of values, constant_then.v1 before its following
// schedule, or a registered schedule; null when learn_rate is a number.
Result<std::unique_ptr<Schedule>> learn_rate_schedule(const OptimizerSection& optimizer);

// Why the schedule cannot drive a run of `steps` optimizer steps, or nothing when it can. A rate of 0
// at some steps is a step that leaves the weights as they are (a warm-up starts there, as in Thinc);
// 0 at every step trains nothing, and a rate that is not finite would make every weight NaN. Runs
// longer than schedule_checked_steps are checked over their first steps only.
std::optional<std::string> schedule_problem(Schedule& schedule, std::uint64_t steps);
constexpr std::uint64_t schedule_checked_steps = std::uint64_t{1} << 20;

}  // namespace psgrad
