#include "io/layer_graph_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "io/toml_text.hpp"
#include "model/layer_registry.hpp"
#include "model/weight_initializer.hpp"
#include "model/registry.hpp"

namespace psgrad {

namespace {

constexpr const char* kLayersKey = "@layers";
constexpr const char* kInitializersKey = "@initializers";
constexpr const char* kPositionalKey = "*";

std::string sub_path(const std::string& path, const std::string& key) { return path + "." + key; }

// Thinc passes positional layers in the order they were written; a TOML table keeps its keys sorted,
// so the order comes from the lines the sections were written on (Thinc's) or their source (TOML's).
std::vector<std::pair<std::string, const toml::table*>> written_order(const toml::table& positional,
                                                                       const std::string& path,
                                                                       const Validator& validator) {
  struct Placed {
    int line;
    std::string key;
    const toml::table* table;
  };
  std::vector<Placed> placed;
  for (const auto& [key_node, node] : positional) {
    const std::string key(key_node.str());
    const int thinc_line = validator.line(sub_path(path, key));
    placed.push_back({thinc_line ? thinc_line : static_cast<int>(node.source().begin.line), key, node.as_table()});
  }
  std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.line < b.line; });
  std::vector<std::pair<std::string, const toml::table*>> ordered;
  for (auto& entry : placed) ordered.emplace_back(std::move(entry.key), entry.table);
  return ordered;
}

// [x.init_W]: a registered initializer and its arguments, those written kept (the defaults are its own).
Result<InitializerSpec> read_initializer(const toml::table* section, const std::string& path,
                                        const Validator& validator) {
  const auto names = fmt::format("{}", fmt::join(initializer_names(), ", "));
  const auto* name = section ? section->get_as<std::string>(kInitializersKey) : nullptr;
  if (!name)
    return validator.fail(path, fmt::format("expected \"{}\" naming an initializer; psgrad has: {}", kInitializersKey,
                                            names));
  const auto* entry = find_initializer(name->get());
  if (!entry)
    return validator.fail(sub_path(path, kInitializersKey),
                          fmt::format("unknown initializer \"{}\"; psgrad has: {}", name->get(), names));
  auto settings = validator.read_settings(section, path, entry->arguments, {kInitializersKey}, entry->name);
  if (!settings) return Error{settings.error()};
  InitializerSpec spec{entry->name, {}};
  for (auto& [key, value] : *settings)
    if (section->contains(key)) spec.arguments.emplace(key, std::move(value));
  return spec;
}

std::string known_names() {
  return fmt::format("layers {}; architectures {}", fmt::join(layer_names(), ", "),
                     fmt::join(architecture_names(), ", "));
}

}  // namespace

bool names_layer_graph(const toml::table* section) {
  if (!section) return false;
  const auto name = section->get_as<std::string>(kLayersKey);
  return name && find_layer(name->get()) != nullptr;
}

Result<LayerSpec> read_layer_graph(const toml::table& section, const std::string& path, const Validator& validator) {
  const auto* name = section.get_as<std::string>(kLayersKey);
  if (!name)
    return validator.fail(path, fmt::format("expected \"{}\" naming a layer; psgrad has: {}", kLayersKey, known_names()));
  const auto entry = find_layer(name->get());
  if (!entry)
    return validator.fail(sub_path(path, kLayersKey),
                          fmt::format("unknown layer \"{}\"; psgrad has: {}", name->get(), known_names()));
  LayerSpec spec;
  spec.name = name->get();
  spec.path = path;
  toml::table arguments;
  for (const auto& [key_node, node] : section) {
    const std::string key(key_node.str());
    const auto key_path = sub_path(path, key);
    if (key == kLayersKey) continue;
    if (key == kPositionalKey) {
      const auto* positional = node.as_table();
      if (!positional || !entry->takes_positional)
        return validator.fail(key_path, fmt::format("{} takes no positional layers", spec.name));
      for (const auto& [child_key, child] : written_order(*positional, key_path, validator)) {
        if (!child) return validator.fail(sub_path(key_path, child_key), "expected a layer section with \"@layers\"");
        auto read = read_layer_graph(*child, sub_path(key_path, child_key), validator);
        if (!read) return Error{read.error()};
        spec.positional.emplace_back(child_key, std::move(*read));
      }
      continue;
    }
    const auto& layers = entry->layer_arguments;
    if (std::find(layers.begin(), layers.end(), key) != layers.end()) {
      const auto* child = node.as_table();
      if (!child) return validator.fail(key_path, "expected a layer section with \"@layers\"");
      auto read = read_layer_graph(*child, key_path, validator);
      if (!read) return Error{read.error()};
      spec.named.emplace_back(key, std::move(*read));
      continue;
    }
    const auto& initializers = entry->initializer_arguments;
    if (std::find(initializers.begin(), initializers.end(), key) != initializers.end()) {
      auto read = read_initializer(node.as_table(), key_path, validator);
      if (!read) return Error{read.error()};
      spec.initializers.emplace_back(key, std::move(*read));
      continue;
    }
    if (node.is_table()) {
      std::vector<std::string> sections(layers.begin(), layers.end());
      sections.insert(sections.end(), initializers.begin(), initializers.end());
      return validator.fail(key_path, fmt::format("{} takes no section '{}'{}", spec.name, key,
                                                  sections.empty() ? "" : fmt::format(" (its sections: {})", fmt::join(sections, ", "))));
    }
    arguments.insert(key, node);
  }
  auto settings = validator.read_settings(&arguments, path, entry->arguments, {}, spec.name);
  if (!settings) return Error{settings.error()};
  // Only what was written is kept: the defaults are the layer's, and a rendered config stays as Thinc reads it.
  for (auto& [key, value] : *settings)
    if (arguments.contains(key)) spec.arguments.emplace(key, std::move(value));
  if (spec.positional.size() < entry->minimum_positional)
    return validator.fail(path, fmt::format("{} needs at least {} layer{} ([{}.*.name] sections)", spec.name,
                                            entry->minimum_positional, entry->minimum_positional == 1 ? "" : "s", path));
  for (const auto& wanted : entry->layer_arguments)
    if (std::none_of(spec.named.begin(), spec.named.end(), [&](const auto& named) { return named.first == wanted; }))
      return validator.fail(path, fmt::format("{} needs its layer '{}': a [{}.{}] section with \"@layers\"", spec.name,
                                              wanted, path, wanted));
  return spec;
}

}  // namespace psgrad
