#include "model/weight_initializer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include <fmt/format.h>

namespace psgrad {

namespace {

InitializerEntry fan_entry(const char* name, const char* description) {
  return {name, description, {}, true};
}

std::vector<InitializerEntry> make_entries() {
  return {
      fan_entry("glorot_uniform_init.v1", "U(-s, s), s = sqrt(6 / (shape[0] + shape[1]))."),
      fan_entry("glorot_normal_init.v1", "N(0, s), s = sqrt(2 / (shape[0] + shape[1]))."),
      fan_entry("he_uniform_init.v1", "U(-s, s), s = sqrt(6 / shape[1])."),
      fan_entry("he_normal_init.v1", "N(0, s), s = sqrt(2 / shape[1])."),
      fan_entry("lecun_uniform_init.v1", "U(-s, s), s = sqrt(3 / shape[1])."),
      fan_entry("lecun_normal_init.v1", "N(0, s), s = sqrt(1 / shape[1])."),
      {"zero_init.v1", "Zeros.", {}, false},
      {"uniform_init.v1",
       "U(lo, hi).",
       {{"lo", SettingKind::number, SettingValue{-0.1}, "Lower bound."},
        {"hi", SettingKind::number, SettingValue{0.1}, "Upper bound."}},
       false},
      // Thinc 8.1.7 draws numpy.random.normal(scale=mean): `mean` is the standard deviation, about 0.
      {"normal_init.v1",
       "N(0, mean): Thinc passes its `mean` as the standard deviation.",
       {{"mean", SettingKind::number, SettingValue{0.0}, "The standard deviation (Thinc's name).", 0.0}},
       false},
  };
}

void fill_uniform(float* values, std::size_t count, double low, double high, Random& rng) {
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(low + (high - low) * rng.uniform());
}

// Box-Muller on the generator's uniforms, as he_normal in model/initializers.hpp.
void fill_normal(float* values, std::size_t count, double scale, Random& rng) {
  constexpr double two_pi = 6.283185307179586;
  for (std::size_t i = 0; i < count; ++i) {
    const double u = 1.0 - rng.uniform();  // in (0, 1]: log(u) is finite
    values[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u)) * std::cos(two_pi * rng.uniform()) * scale);
  }
}

}  // namespace

const std::vector<InitializerEntry>& initializer_entries() {
  static const std::vector<InitializerEntry> entries = make_entries();
  return entries;
}

const InitializerEntry* find_initializer(const std::string& name) {
  for (const auto& entry : initializer_entries())
    if (entry.name == name) return &entry;
  return nullptr;
}

std::vector<std::string> initializer_names() {
  std::vector<std::string> names;
  for (const auto& entry : initializer_entries()) names.push_back(entry.name);
  return names;
}

Result<WeightInitializer> WeightInitializer::make(const InitializerSpec& spec, std::size_t rank) {
  const auto* entry = find_initializer(spec.name);
  if (!entry)
    return Error{fmt::format("unknown initializer \"{}\"; psgrad has: {}", spec.name, fmt::join(initializer_names(), ", "))};
  Settings arguments = spec.arguments;
  for (const auto& [name, value] : arguments) {
    const auto found = std::find_if(entry->arguments.begin(), entry->arguments.end(),
                                    [&](const SettingSpec& argument) { return argument.name == name; });
    if (found == entry->arguments.end())
      return Error{fmt::format("{} takes no argument '{}'", spec.name, name)};
    if (auto expected = check_setting(*found, value)) return Error{fmt::format("{}: expected {}", name, *expected)};
  }
  fill_defaults(entry->arguments, arguments);
  if (entry->uses_fans && rank < 2)
    return Error{fmt::format("{} scales by the array's first two axes, and this array has one (Thinc fails on it "
                             "too); use zero_init.v1, uniform_init.v1 or normal_init.v1",
                             spec.name)};
  WeightInitializer made;
  made.name_ = spec.name;
  if (spec.name == "uniform_init.v1") {
    made.low_ = get_number(arguments, "lo");
    made.high_ = get_number(arguments, "hi");
    if (made.high_ < made.low_) return Error{fmt::format("uniform_init.v1: lo = {} is above hi = {}", made.low_, made.high_)};
  }
  if (spec.name == "normal_init.v1") made.mean_ = get_number(arguments, "mean");
  return made;
}

void WeightInitializer::fill(float* values, const std::vector<std::size_t>& shape, Random& rng) const {
  const auto count = std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
  const double axis0 = shape.empty() ? 0.0 : static_cast<double>(shape[0]);
  const double axis1 = shape.size() < 2 ? 0.0 : static_cast<double>(shape[1]);
  if (name_ == "glorot_uniform_init.v1") return fill_uniform(values, count, -std::sqrt(6.0 / (axis0 + axis1)),
                                                           std::sqrt(6.0 / (axis0 + axis1)), rng);
  if (name_ == "glorot_normal_init.v1") return fill_normal(values, count, std::sqrt(2.0 / (axis0 + axis1)), rng);
  if (name_ == "he_uniform_init.v1") return fill_uniform(values, count, -std::sqrt(6.0 / axis1), std::sqrt(6.0 / axis1), rng);
  if (name_ == "he_normal_init.v1") return fill_normal(values, count, std::sqrt(2.0 / axis1), rng);
  if (name_ == "lecun_uniform_init.v1")
    return fill_uniform(values, count, -std::sqrt(3.0 / axis1), std::sqrt(3.0 / axis1), rng);
  if (name_ == "lecun_normal_init.v1") return fill_normal(values, count, std::sqrt(1.0 / axis1), rng);
  if (name_ == "uniform_init.v1") return fill_uniform(values, count, low_, high_, rng);
  if (name_ == "normal_init.v1") return fill_normal(values, count, mean_, rng);
  std::fill(values, values + count, 0.0f);  // zero_init.v1
}

Result<ArrayInitializers> array_initializers(const LayerSpec& spec, std::size_t w_rank, std::size_t b_rank) {
  ArrayInitializers chosen;
  for (const auto& [key, initializer] : spec.initializers) {
    const bool weights = key == "init_W";
    if (!weights && key != "init_b") return Error{fmt::format("{}: takes no initializer '{}'", spec.name, key)};
    auto made = WeightInitializer::make(initializer, weights ? w_rank : b_rank);
    if (!made) return Error{fmt::format("{}: {}: {}", spec.name, key, made.error())};
    (weights ? chosen.weights : chosen.bias) = std::move(made).value();
  }
  return chosen;
}

}  // namespace psgrad
