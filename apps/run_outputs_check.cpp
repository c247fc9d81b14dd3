#include "apps/run_outputs_check.hpp"

#include <string>
#include <utility>
#include <vector>

#include "io/output_path.hpp"

namespace psgrad {

Status check_run_outputs(const RunOptions& options, const Config& config) {
  // An unset --metrics writes into runs/, which the writer creates under a free name.
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {options.save_model, "model file (--save)"},
      {options.save_weights, "weights file (--save-weights)"},
      {options.trace_path, "trace file (--trace)"},
      {options.metrics_path.value_or(""), "metrics file (--metrics)"},
      {config.training.checkpoint_path, "checkpoint (training.checkpoint_path)"},
  };
  for (const auto& [path, what] : outputs)
    if (!path.empty())
      if (auto writable = check_output_path(path, what); !writable) return writable;
  return success();
}

}  // namespace psgrad
