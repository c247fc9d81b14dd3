#include "model/layer_registry.hpp"
#include "model/weight_initializer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/layer_entries.hpp"
#include "model/named_registry.hpp"

namespace psgrad {

namespace {

NamedRegistry<LayerEntry>& layers() {
  static NamedRegistry<LayerEntry> registry{};
  static const bool filled = [] {
    for (auto kind : {dense_layer_entries(), combinator_entries(), table_front_entries()})
      for (auto& entry : kind) registry.add(std::move(entry));
    return true;
  }();
  (void)filled;
  return registry;
}

Result<LayerList> build_spec(const LayerSpec& spec, std::size_t input_width, std::optional<std::size_t> output_width) {
  const auto entry = find_layer(spec.name);
  if (!entry) return layer_error(spec, "not a layer psgrad has");
  Settings arguments = spec.arguments;
  fill_defaults(entry->arguments, arguments);
  try {
    return entry->build(spec, arguments, input_width, output_width, build_spec);
  } catch (const std::exception& error) {  // a combinator's own checks of its layers' widths
    return layer_error(spec, error.what());
  }
}

}  // namespace

std::shared_ptr<const LayerEntry> find_layer(const std::string& name) { return layers().find(name); }
std::vector<std::string> layer_names() { return layers().names(); }

Status check_layer_spec(const LayerSpec& spec) {
  const auto entry = find_layer(spec.name);
  if (!entry)
    return Error{fmt::format("{}: unknown layer '{}'; psgrad has: {}", layer_where(spec), spec.name,
                             fmt::join(layer_names(), ", "))};
  for (const auto& [name, value] : spec.arguments) {
    const auto found = std::find_if(entry->arguments.begin(), entry->arguments.end(),
                                    [&](const SettingSpec& argument) { return argument.name == name; });
    if (found == entry->arguments.end()) {
      std::vector<std::string> known;
      for (const auto& argument : entry->arguments) known.push_back(argument.name);
      for (const auto& layer : entry->layer_arguments) known.push_back(layer);
      return layer_error(spec, fmt::format("unknown argument '{}'; it takes: {}", name,
                                           known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
    }
    if (auto expected = check_setting(*found, value)) return layer_error(spec, fmt::format("{}: expected {}", name, *expected));
  }
  if (!entry->takes_positional && !spec.positional.empty())
    return layer_error(spec, "takes no positional layers ([...*.name] sections)");
  if (spec.positional.size() < entry->minimum_positional)
    return layer_error(spec, fmt::format("needs at least {} layer{} ([{}.*.name] sections)", entry->minimum_positional,
                                         entry->minimum_positional == 1 ? "" : "s", layer_where(spec)));
  for (const auto& [key, layer] : spec.named)
    if (std::find(entry->layer_arguments.begin(), entry->layer_arguments.end(), key) == entry->layer_arguments.end())
      return layer_error(spec, fmt::format("takes no layer '{}'", key));
  for (const auto& [key, initializer] : spec.initializers) {
    const auto& known = entry->initializer_arguments;
    if (std::find(known.begin(), known.end(), key) == known.end())
      return layer_error(spec, fmt::format("takes no initializer '{}'{}", key,
                                           known.empty() ? "" : fmt::format(" (its initializers: {})", fmt::join(known, ", "))));
    if (auto made = WeightInitializer::make(initializer, 2); !made)
      return layer_error(spec, fmt::format("{}: {}", key, made.error()));
  }
  for (const auto& wanted : entry->layer_arguments)
    if (std::none_of(spec.named.begin(), spec.named.end(), [&](const auto& named) { return named.first == wanted; }))
      return layer_error(spec, fmt::format("needs its layer '{}' ([{}.{}] with @layers)", wanted, layer_where(spec), wanted));
  for (const auto& [key, layer] : spec.positional)
    if (auto checked = check_layer_spec(layer); !checked) return checked;
  for (const auto& [key, layer] : spec.named)
    if (auto checked = check_layer_spec(layer); !checked) return checked;
  return success();
}

Result<LayerList> build_layers(const LayerSpec& spec, std::size_t input_width, std::optional<std::size_t> output_width) {
  if (auto checked = check_layer_spec(spec); !checked) return Error{checked.error()};
  return build_spec(spec, input_width, output_width);
}

}  // namespace psgrad
