// Which features of a run each kind of parameter offers: the one table that every refusal of a feature
// for a kind of model comes from, and that docs/features.md is generated from.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/job.hpp"
#include "model/result.hpp"

namespace psgrad {

struct RunFeature {
  std::string name;  // a config key ("cluster.pipeline") or a command's flag ("launch --slurm")
  std::string what;  // what it does, for the docs
  // Whether a job uses it; unset for a command's flag, which its command asks about by name.
  std::function<bool(const TrainingJob&)> used_by;
  // Why a model with embedding tables cannot have it yet; empty: offered for every model.
  std::string not_with_tables;
  // How it applies to a model with embedding tables where it is offered but differs; empty: the same.
  std::string with_tables;
};

const std::vector<RunFeature>& run_features();

// The first feature the job uses that its model does not offer, as one line naming the feature and why;
// success when it uses none.
Status check_run_features(const TrainingJob& job, bool has_tables);
// The same for one feature by its name in run_features() (a command's flag).
Status check_run_feature(const std::string& name, bool has_tables);

// docs/features.md: the table by parameter kind.
std::string run_features_markdown();

}  // namespace psgrad
