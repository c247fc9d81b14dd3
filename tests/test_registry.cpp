// The registries of architectures, optimizers and schedules: an entry a caller found stays whole while
// its name is registered again, and later finds see the new entry.
#include <doctest/doctest.h>

#include <memory>
#include <ostream>  // doctest prints a failed check's shared_ptr with operator<<
#include <string>

#include "model/named_registry.hpp"
#include "model/registry.hpp"
#include "model/relu.hpp"
#include "model/schedule.hpp"
#include "model/softmax.hpp"

using namespace psgrad;

namespace {

// hidden_layers Relu layers, then Softmax; the description is long enough to live on the heap, so a
// replaced entry's text would be freed rather than kept in place.
Architecture stacked_relus(const std::string& name, int hidden_layers) {
  const std::string description = "A test stack of " + std::to_string(hidden_layers) + " Relu layers, then Softmax.";
  return {name, description, {}, [hidden_layers](const Settings&, std::size_t in, std::size_t out) {
            LayerChain chain;
            for (int i = 0; i < hidden_layers; ++i) chain.push_back(std::make_unique<Relu>(in, in));
            chain.push_back(std::make_unique<Softmax>(out, in));
            return chain;
          }};
}

class ConstantRate final : public Schedule {
 public:
  explicit ConstantRate(double rate) : rate_(rate) {}
  double at(std::uint64_t) override { return rate_; }

 private:
  double rate_;
};

ScheduleEntry constant_rate(const std::string& name, double rate) {
  return {name, "A test schedule at " + std::to_string(rate) + " every step.", {},
          [rate](const Settings&) -> Result<std::unique_ptr<Schedule>> {
            return std::unique_ptr<Schedule>(std::make_unique<ConstantRate>(rate));
          }};
}

struct Labeled {
  std::string name;
  std::string label;
};

}  // namespace

TEST_CASE("a registry entry found before its name is registered again stays valid") {
  const std::string name = "registry_test_architecture.v1";
  register_architecture(stacked_relus(name, 1));
  const auto found = find_architecture(name);
  REQUIRE(found != nullptr);

  register_architecture(stacked_relus(name, 3));

  CHECK(found->name == name);
  CHECK(found->description == "A test stack of 1 Relu layers, then Softmax.");
  CHECK(found->build({}, 4, 2).size() == 2);
  const auto found_again = find_architecture(name);
  REQUIRE(found_again != nullptr);
  CHECK(found_again->description == "A test stack of 3 Relu layers, then Softmax.");
  CHECK(found_again->build({}, 4, 2).size() == 4);
}

TEST_CASE("an optimizer or schedule found before its name is registered again stays valid") {
  const std::string optimizer_name = "registry_test_optimizer.v1";
  auto optimizer = *find_optimizer("SGD.v1");
  optimizer.name = optimizer_name;
  optimizer.description = "The first registration.";
  register_optimizer(optimizer);
  const auto found_optimizer = find_optimizer(optimizer_name);
  REQUIRE(found_optimizer != nullptr);
  optimizer.description = "The second registration.";
  optimizer.settings.clear();
  register_optimizer(optimizer);
  CHECK(found_optimizer->description == "The first registration.");
  CHECK_FALSE(found_optimizer->settings.empty());
  CHECK(find_optimizer(optimizer_name)->description == "The second registration.");

  const std::string schedule_name = "registry_test_schedule.v1";
  register_schedule(constant_rate(schedule_name, 0.5));
  const auto found_schedule = find_schedule(schedule_name);
  REQUIRE(found_schedule != nullptr);
  register_schedule(constant_rate(schedule_name, 0.25));
  auto first = found_schedule->build({});
  REQUIRE(first.ok());
  CHECK((*first)->at(7) == 0.5);
  auto second = build_schedule(schedule_name, {});
  REQUIRE(second.ok());
  CHECK((*second)->at(7) == 0.25);
}

TEST_CASE("a named registry lists its names sorted and finds nothing for an unknown name") {
  NamedRegistry<Labeled> registry{{"b", "built in"}, {"a", "built in"}};
  registry.add({"c", "added"});
  registry.add({"a", "replaced"});
  CHECK(registry.names() == std::vector<std::string>{"a", "b", "c"});
  CHECK(registry.find("a")->label == "replaced");
  CHECK(registry.find("z") == nullptr);
}
