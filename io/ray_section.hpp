// The [ray] section of Thinc's parameter-server tutorial, read in both config formats: its num_workers
// is cluster.num_workers; Ray's own settings size a Ray cluster, which psgrad does not start.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "io/config_validator.hpp"
#include "model/result.hpp"

namespace psgrad {

// Ray's ray.init() settings a [ray] section may hold; they are ignored, with one note naming them.
const std::vector<std::string>& ignored_ray_keys();

// Takes [ray] out of the document: num_workers goes to [cluster] (messages about it name
// ray.num_workers), the keys of ignored_ray_keys() go into one note, any other key is refused. When
// both ray.num_workers and cluster.num_workers are set, a command-line flag beats --set, --set beats
// the file, and two of the same kind are refused as a conflict.
Status fold_ray_section(toml::table& document, const std::string& source, OverrideRecord& record,
                        KeyLocations& locations, std::vector<std::string>& notes);

}  // namespace psgrad
