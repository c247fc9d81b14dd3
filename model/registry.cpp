#include "model/registry.hpp"

#include <fmt/format.h>

#include "model/adam.hpp"
#include "model/dropout.hpp"
#include "model/hashembed_architecture.hpp"
#include "model/named_registry.hpp"
#include "model/relu.hpp"
#include "model/sgd.hpp"
#include "model/softmax.hpp"

namespace psgrad {

namespace {

SettingSpec dropout_spec() {
  return {"dropout", SettingKind::number, SettingValue{0.2},
          "Dropout rate applied after each hidden activation while training.", 0.0, 1.0, true};
}

// Relu(width, dropout) in Thinc is chain(Relu, Dropout): the dropout follows the activation.
void add_hidden(LayerChain& chain, std::size_t width, std::size_t input_width, double dropout) {
  chain.push_back(std::make_unique<Relu>(width, input_width));
  if (dropout > 0.0) chain.push_back(std::make_unique<Dropout>(width, static_cast<float>(dropout)));
}

Architecture relu_relu_softmax() {
  Architecture entry;
  entry.name = "relu_relu_softmax.v1";
  entry.description = "The tutorial's MLP: Relu(hidden_width, dropout) >> Relu(hidden_width, dropout) >> Softmax.";
  entry.settings = {
      {"hidden_width", SettingKind::integer, SettingValue{std::int64_t{128}},
       "Width of both hidden Relu layers.", 1.0, 1 << 20},
      dropout_spec(),
  };
  entry.build = [](const Settings& settings, std::size_t input_width, std::size_t output_width) {
    const auto width = static_cast<std::size_t>(get_integer(settings, "hidden_width"));
    const double dropout = get_number(settings, "dropout");
    LayerChain chain;
    add_hidden(chain, width, input_width, dropout);
    add_hidden(chain, width, width, dropout);
    chain.push_back(std::make_unique<Softmax>(output_width, width));
    return chain;
  };
  return entry;
}

Architecture mlp() {
  Architecture entry;
  entry.name = "mlp.v1";
  entry.description = "A general MLP: one Relu(width, dropout) per entry of widths, then Softmax.";
  entry.settings = {
      {"widths", SettingKind::integer_list, SettingValue{std::vector<std::int64_t>{128, 128}},
       "Widths of the hidden layers, input side first.", 1.0, 1 << 20},
      {"activation", SettingKind::text, SettingValue{std::string("relu")},
       "Hidden activation.", std::nullopt, std::nullopt, false, false, {"relu"}},
      dropout_spec(),
  };
  entry.build = [](const Settings& settings, std::size_t input_width, std::size_t output_width) {
    const double dropout = get_number(settings, "dropout");
    LayerChain chain;
    std::size_t width_in = input_width;
    for (auto width : get_integer_list(settings, "widths")) {
      add_hidden(chain, static_cast<std::size_t>(width), width_in, dropout);
      width_in = static_cast<std::size_t>(width);
    }
    chain.push_back(std::make_unique<Softmax>(output_width, width_in));
    return chain;
  };
  return entry;
}

std::vector<SettingSpec> shared_optimizer_specs() {
  return {
      {"L2", SettingKind::number, SettingValue{0.0},
       "L2 penalty; with L2_is_weight_decay it is decoupled decay w -= learn_rate * L2 * w.", 0.0},
      {"grad_clip", SettingKind::number, SettingValue{1.0},
       "Clip each parameter array's gradient to this Frobenius norm (0 disables).", 0.0},
      {"L2_is_weight_decay", SettingKind::boolean, SettingValue{true},
       "Apply L2 as decoupled weight decay after the step instead of adding it to the gradient."},
  };
}

// The validated values of the settings shared_optimizer_specs declares.
void read_shared_settings(const Settings& settings, SharedOptimizerSettings& out) {
  out.L2 = get_number(settings, "L2");
  out.grad_clip = get_number(settings, "grad_clip");
  out.L2_is_weight_decay = get_boolean(settings, "L2_is_weight_decay");
}

// Adam.v1's and RAdam.v1's validated settings; rectified: RAdam's step.
AdamSettings adam_settings_of(const Settings& settings, bool rectified) {
  AdamSettings adam_settings;
  read_shared_settings(settings, adam_settings);
  adam_settings.learn_rate = get_number(settings, "learn_rate");
  adam_settings.beta1 = get_number(settings, "beta1");
  adam_settings.beta2 = get_number(settings, "beta2");
  adam_settings.eps = get_number(settings, "eps");
  adam_settings.use_averages = get_boolean(settings, "use_averages");
  adam_settings.rectified = rectified;
  return adam_settings;
}

SettingSpec use_averages_spec() {
  return {"use_averages", SettingKind::boolean, SettingValue{true},
          "Keep Thinc's exponential moving average of the weights (as Thinc's default does); training.with_averages "
          "evaluates and saves them."};
}

OptimizerEntry adam() {
  OptimizerEntry entry;
  entry.name = "Adam.v1";
  entry.description = "Thinc's Adam with its Adam.v1 defaults.";
  entry.settings = {
      {"learn_rate", SettingKind::number, SettingValue{0.001}, "Step size.", 0.0, std::nullopt, false, true},
      {"beta1", SettingKind::number, SettingValue{0.9}, "Decay of the first moment.", 0.0, 1.0, true},
      {"beta2", SettingKind::number, SettingValue{0.999}, "Decay of the second moment.", 0.0, 1.0, true},
      {"eps", SettingKind::number, SettingValue{1e-8}, "Added to sqrt(v) in the denominator.", 0.0,
       std::nullopt, false, true},
  };
  for (auto& spec : shared_optimizer_specs()) entry.settings.push_back(spec);
  entry.settings.push_back(use_averages_spec());
  entry.build = [](const Settings& settings, const ParameterLayout& layout) -> std::unique_ptr<Optimizer> {
    return std::make_unique<Adam>(adam_settings_of(settings, false), layout);
  };
  return entry;
}

// Thinc's RAdam.v1: Adam.v1's settings and defaults, a rectified step.
OptimizerEntry radam() {
  OptimizerEntry entry = adam();
  entry.name = "RAdam.v1";
  entry.description = "Thinc's RAdam (rectified Adam) with its RAdam.v1 defaults.";
  entry.build = [](const Settings& settings, const ParameterLayout& layout) -> std::unique_ptr<Optimizer> {
    return std::make_unique<Adam>(adam_settings_of(settings, true), layout);
  };
  return entry;
}

OptimizerEntry sgd() {
  OptimizerEntry entry;
  entry.name = "SGD.v1";
  entry.description = "Plain stochastic gradient descent, as Thinc's SGD.v1.";
  entry.settings = {{"learn_rate", SettingKind::number, std::nullopt, "Step size (required).", 0.0,
                     std::nullopt, false, true}};
  for (auto& spec : shared_optimizer_specs()) entry.settings.push_back(spec);
  entry.settings.push_back(use_averages_spec());
  entry.build = [](const Settings& settings, const ParameterLayout& layout) -> std::unique_ptr<Optimizer> {
    SgdSettings sgd_settings;
    read_shared_settings(settings, sgd_settings);
    sgd_settings.learn_rate = get_number(settings, "learn_rate");
    sgd_settings.use_averages = get_boolean(settings, "use_averages");
    return std::make_unique<Sgd>(sgd_settings, layout);
  };
  return entry;
}

NamedRegistry<Architecture>& architectures() {
  static NamedRegistry<Architecture> registry{relu_relu_softmax(), mlp(), hashembed_mlp_architecture()};
  return registry;
}

NamedRegistry<OptimizerEntry>& optimizers() {
  static NamedRegistry<OptimizerEntry> registry{adam(), radam(), sgd()};
  return registry;
}

}  // namespace

Result<Settings> validated_settings(const Architecture& architecture, const Settings& settings) {
  Settings filled = settings;
  if (auto missing = fill_defaults(architecture.settings, filled))
    return Error{fmt::format("architecture '{}': missing setting '{}'", architecture.name, *missing)};
  for (const auto& spec : architecture.settings)
    if (auto expected = check_setting(spec, filled.at(spec.name)))
      return Error{fmt::format("architecture '{}': {}: expected {}", architecture.name, spec.name, *expected)};
  return filled;
}

void register_architecture(Architecture architecture) { architectures().add(std::move(architecture)); }
std::shared_ptr<const Architecture> find_architecture(const std::string& name) { return architectures().find(name); }
std::vector<std::string> architecture_names() { return architectures().names(); }
bool names_architecture_with_tables(const std::string& name) {
  const auto entry = find_architecture(name);
  return entry && has_tables(*entry);
}

std::vector<std::string> architecture_names_with_tables() {
  std::vector<std::string> names;
  for (auto& name : architecture_names())
    if (names_architecture_with_tables(name)) names.push_back(std::move(name));
  return names;
}

void register_optimizer(OptimizerEntry optimizer) { optimizers().add(std::move(optimizer)); }
std::shared_ptr<const OptimizerEntry> find_optimizer(const std::string& name) { return optimizers().find(name); }
std::vector<std::string> optimizer_names() { return optimizers().names(); }

}  // namespace psgrad
